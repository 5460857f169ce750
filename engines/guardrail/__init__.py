"""Live streaming guardrail: a latent-dynamics risk head on SmolLM2's hidden states.

PlugGuard / Kelp (arXiv 2510.09694): a Streaming Latent Dynamics (SLD) head reads intermediate
hidden states of the protected LM at every generated token, keeps a GRU memory of how risk
evolves, and is trained with an Anchored Temporal Consistency (ATC) loss.

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
from engines.guardrail.head import SLDHead, atc_loss
from engines.guardrail.metrics import stop_index, streaming_report

__all__ = ["POLICIES", "GuardConfig", "Guardrail", "RiskTrace", "SLDHead", "StreamEvent", "atc_loss", "default_policy", "head_info",
           "shared_guardrail", "stop_index", "streaming_report"]
