"""Why :meth:`engines.codeprm.CodePRM.rank` put its first candidate first, in plain words.

The ranking compares candidates key by key (SecCodePRM's candidate ranking): first whether the code
parses, then the top-k safe ratio (the share of a candidate's k riskiest steps that are safe), then
the soft minimum of its step safety (its overall risk is one minus that), then the order given. The
words name the first key on which the winner beat the runner-up, with both candidates' numbers.
"""
from __future__ import annotations


def explain_ranking(ranked: list[dict]) -> str:
    """One sentence on why the first of ``ranked`` (the output of ``CodePRM.rank``) beat the second,
    and how many candidates parse.

    >>> explain_ranking([{"index": 1, "parses": True, "topk_safe_ratio": 1.0, "reward": 0.98},
    ...                  {"index": 0, "parses": True, "topk_safe_ratio": 0.0, "reward": 0.01}])
    'Candidate 2 ranks first: all of its riskiest steps are safe (safe share 1.00), against 0.00 for candidate 1. All 2 candidates parse.'
    """
    if not ranked:
        return ""
    n_ok = sum(bool(d["parses"]) for d in ranked)
    parse_words = (f"All {len(ranked)} candidates parse." if n_ok == len(ranked) else
                   f"{len(ranked) - n_ok} of {len(ranked)} do not parse and are ranked last.")
    a = ranked[0]
    head = f"Candidate {a['index'] + 1} ranks first"
    if len(ranked) == 1:
        return f"{head}: it is the only candidate. {parse_words}"
    b = ranked[1]
    other = f"candidate {b['index'] + 1}"
    if a["parses"] != b["parses"]:
        why = f"it parses and {other}, next, does not"
    elif round(a["topk_safe_ratio"], 6) != round(b["topk_safe_ratio"], 6):
        share = a["topk_safe_ratio"]
        which = ("all of its riskiest steps are safe" if share >= 1 else "none of its riskiest steps is safe"
                 if share <= 0 else f"{share:.0%} of its riskiest steps are safe")
        why = f"{which} (safe share {share:.2f}), against {b['topk_safe_ratio']:.2f} for {other}"
    elif round(a["reward"], 6) != round(b["reward"], 6):
        why = (f"tied with {other} on the safe share of its riskiest steps ({a['topk_safe_ratio']:.2f}), it has "
               f"the lower overall risk: {1 - a['reward']:.3f} against {1 - b['reward']:.3f}")
    else:
        why = f"it scores the same as {other} on every key and was given first"
    return f"{head}: {why}. {parse_words}"
