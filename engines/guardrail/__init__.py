"""Live streaming guardrail: a latent-dynamics risk head on SmolLM2's hidden states.

PlugGuard / Kelp (arXiv 2510.09694): a Streaming Latent Dynamics (SLD) head reads intermediate
hidden states of the protected LM at every generated token, keeps a GRU memory of how risk
evolves, and is trained with an Anchored Temporal Consistency (ATC) loss. Two verbs:
:meth:`Guardrail.stream` (generate and stop under a policy) and :meth:`Guardrail.score` (risks of a
given reply), with their results :class:`StreamEvent` and :class:`RiskTrace`.

>>> from engines.guardrail import GuardConfig
>>> GuardConfig().layers
(15, 21, 30)
"""
from engines.guardrail.config import GuardConfig
from engines.guardrail.guard import (
    POLICIES,
    Guardrail,
    RiskTrace,
    StreamEvent,
    default_policy,
    head_info,
    shared_guardrail,
)

__all__ = ["POLICIES", "GuardConfig", "Guardrail", "RiskTrace", "StreamEvent", "default_policy", "head_info",
           "shared_guardrail"]
