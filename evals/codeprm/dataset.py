"""Build the codeprm step-labelled corpus from Python code on this machine (one command, seeded).

    .venv/bin/python -m evals.codeprm.dataset  # -> data/codeprm/{train,val,test}.jsonl

Sources: the standard library of the running interpreter (minus its own test suites) and the
packages installed in .venv. The split is by *package* (a top-level module of stdlib or of
site-packages): crc32(package) % 10 in 0..6 -> train, 7 -> val, 8..9 -> test, so no file is in
two splits. Each item is a chunk of one file (20..90 lines cut at top-level blank lines).

Labels: bandit (in-process, on repaired code, filtered to the CWE families in
``engines.codeprm.labels.BANDIT_CWE``) + our taint labeller, and mutation pairs: half the
chunks get a template function injected (vulnerable or its fixed twin). Template lines take
their label from the template; the rest of the chunk from the analysers.

train uses template variant a, val variant b (so the threshold is calibrated on an idiom the
model never saw, as test-time code will be), plus composed functions (evals/codeprm/synth.py)
in train and, from another part of the seeded stream, in val. The test set is the held-out "generated code" set:
vulnerable/fixed pairs of the held-out variant c of each family, injected into chunks of test
packages on which the analysers find nothing (or rendered standalone, imports + function, as an
assistant would emit), so the pair's two files differ only in the template.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sysconfig
import time
import zlib
from pathlib import Path

from engines.codeprm.labels import label_findings
from evals.codeprm import registry
from evals.codeprm.mutations import (
    FAMILIES,
    inject,
    inject_statement,
    render,
    templates,
)
from evals.codeprm.synth import compose_pair, synth_function

SEED = 0
SKIP_DIRS = {"test", "tests", "idle_test", "__pycache__", "testing", "_vendor", "vendored", "site-packages"}


# sets already evaluated once that --extra-train may turn into training templates (registry flag)
EXTRA_TRAIN = [x.name for x in registry.SETS if x.extra_train]


def package_files() -> dict[str, list[Path]]:
    """{package: [files]} for stdlib and site-packages (sorted, deterministic)."""
    roots = [("stdlib", Path(sysconfig.get_paths()["stdlib"])), ("site", Path(sysconfig.get_paths()["purelib"]))]
    out: dict[str, list[Path]] = {}
    for tag, root in roots:
        for entry in sorted(root.iterdir()):
            if entry.name.startswith((".", "_")) and entry.name not in ("_pytest",):
                continue
            if entry.is_file() and entry.suffix == ".py":
                out.setdefault(f"{tag}:{entry.stem}", []).append(entry)
            elif entry.is_dir() and not entry.name.endswith((".dist-info", ".egg-info")) and entry.name not in SKIP_DIRS:
                files = []
                for dp, dns, fns in os.walk(entry):
                    dns[:] = sorted(d for d in dns if d not in SKIP_DIRS)
                    files += [Path(dp) / f for f in sorted(fns) if f.endswith(".py")]
                if files:
                    out[f"{tag}:{entry.name}"] = files
    return out


def split_of(pkg: str) -> str:
    h = zlib.crc32(pkg.encode()) % 10
    return "train" if h < 7 else ("val" if h == 7 else "test")


def chunks(text: str, rng: random.Random, k: int) -> list[str]:
    """Up to k chunks of 20..90 lines starting/ending at top-level blank-line boundaries."""
    lines = text.splitlines()
    cuts = [i for i in range(1, len(lines)) if not lines[i - 1].strip() and lines[i][:1] not in (" ", "\t", "", ")", "]", "}")]
    cuts = [0] + cuts
    out = []
    for _ in range(k * 3):
        if len(out) >= k or len(cuts) < 2:
            break
        a = rng.choice(cuts)
        target = rng.randint(20, 90)
        ends = [c for c in cuts if c > a and c - a <= target] or [min(len(lines), a + target)]
        b = ends[-1]
        piece = "\n".join(lines[a:b]).strip("\n")
        if 8 <= piece.count("\n") and len(piece) < 8000:
            out.append(piece + "\n")
    return out


def make_item(code: str, pkg: str, split: str, tpl=None, vulnerable=None, bad=(), span=None, pair=None) -> dict:
    nat = label_findings(code)
    if span is not None:  # template lines take the template's label
        nat = [f for f in nat if not span[0] <= f.line <= span[1]]
    findings = [[f.line, f.cwe, f.rule] for f in nat] + [[b, tpl.cwe, f"template:{tpl.key}"] for b in bad]
    return {"code": code, "findings": sorted(findings), "pkg": pkg, "split": split,
            "template": tpl.key if tpl else None, "vulnerable": vulnerable, "pair": pair}


def make_statement_item(code: str, bad: list[int], host: str, pkg: str) -> dict:
    """A statement-level mutation: inserted lines get the mutation's label, the rest the analysers'."""
    n_new = len(code.splitlines()) - len(host.splitlines())
    nat = label_findings(code)
    if bad:
        span = (bad[0] - n_new + 1, bad[0])
        nat = [f for f in nat if not span[0] <= f.line <= span[1]]
    else:
        # fixed twin: drop analyser findings on the inserted lines (found by diffing)
        new_lines = code.splitlines()
        old = host.splitlines()
        k = next((i for i, (a, b) in enumerate(zip(new_lines, old)) if a != b), len(old))
        nat = [f for f in nat if not k + 1 <= f.line <= k + n_new]
    cwe = None
    findings = [[f.line, f.cwe, f.rule] for f in nat]
    for b in bad:
        fam = next((f.cwe for f in label_findings(code) if f.line == b), None)
        cwe = fam or 0
        findings.append([b, cwe, "mutation:statement"])
    return {"code": code, "findings": sorted(findings), "pkg": pkg, "split": "train", "template": "statement",
            "vulnerable": bool(bad), "pair": None}


def injected(host: str, tpl, vul: bool, seed: int):
    rng = random.Random(seed)
    code, bad = inject(host, tpl, vul, rng)
    # the template's own lines: find them again by rendering with the same seed
    rng2 = random.Random(seed)
    imports, body, _ = render(tpl, vul, rng2)
    n_imp = len(imports.splitlines()) + (1 if imports else 0)
    lines = code.splitlines()
    body_lines = body.splitlines()
    start = None
    for i in range(len(lines) - len(body_lines) + 1):
        if lines[i:i + len(body_lines)] == body_lines:
            start = i + 1
            break
    span = (start, start + len(body_lines) - 1) if start else None
    imp_span = (1, n_imp) if n_imp else None
    return code, bad, span, imp_span


def write_synth(fh, hosts: list, split: str, n: int, rng: random.Random) -> int:
    """Composed functions (evals/codeprm/synth.py), standalone or injected into a host chunk."""
    for k in range(n):
        vul = k % 2 == 0
        code, bad, cwe = synth_function(rng, vul)
        pkg = "synth"
        if hosts and rng.random() < 0.5:
            pkg, host = rng.choice(hosts)
            hl = host.rstrip("\n").splitlines()
            at = rng.choice([i for i in range(len(hl)) if not hl[i].strip()] or [len(hl)])
            code_lines = hl[:at] + [""] + code.rstrip("\n").splitlines() + [""] + hl[at:]
            bad = [b + at + 1 for b in bad]
            span = (at + 2, at + 1 + len(code.rstrip("\n").splitlines()))
            code = "\n".join(code_lines) + "\n"
        else:
            span = (1, len(code.splitlines()))
        nat = [f for f in label_findings(code) if not span[0] <= f.line <= span[1]]
        findings = sorted([[f.line, f.cwe, f.rule] for f in nat] + [[b, cwe, "synth"] for b in bad])
        fh.write(json.dumps({"code": code, "findings": findings, "pkg": pkg, "split": split, "template": f"synth-{cwe}",
                             "vulnerable": vul, "pair": None}) + "\n")
    return n


def write_composed(fh, hosts: list, n_pairs: int, seed: int) -> int:
    """Combinatorial vulnerable/fixed PAIRS (codeprm_synth.compose_pair): both twins share every
    draw (and, half of the time, the same train host chunk) and differ only by the idiomatic fix.
    The sink lines take the construction's label; the other lines the analysers'. Pairs that do
    not parse are skipped. Own RNG stream, written after everything else, so val/test are unchanged."""
    import ast

    rng = random.Random(seed)
    written = 0
    for k in range(n_pairs):
        twins = compose_pair(rng.randrange(1 << 30))
        try:
            for code, _b, _c in twins:
                ast.parse(code)
        except SyntaxError:
            continue
        host_pick = rng.choice(hosts) if hosts and rng.random() < 0.5 else None
        at_r = rng.random()
        for vul, (code, bad, cwe) in zip((True, False), twins):
            pkg = "compose"
            span = (1, len(code.splitlines()))
            if host_pick is not None:
                pkg, host = host_pick
                hl = host.rstrip("\n").splitlines()
                pts = [i for i in range(len(hl)) if not hl[i].strip()] or [len(hl)]
                at = pts[int(at_r * len(pts))]
                cl = code.rstrip("\n").splitlines()
                code = "\n".join(hl[:at] + [""] + cl + [""] + hl[at:]) + "\n"
                bad = [b + at + 1 for b in bad]
                span = (at + 2, at + 1 + len(cl))
            nat = [f for f in label_findings(code) if not span[0] <= f.line <= span[1]]
            findings = sorted([[f.line, f.cwe, f.rule] for f in nat] + [[b, cwe, "compose"] for b in bad])
            fh.write(json.dumps({"code": code, "findings": findings, "pkg": pkg, "split": "train",
                                 "template": f"compose-{cwe}", "vulnerable": vul, "pair": None}) + "\n")
            written += 1
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="data/codeprm")
    ap.add_argument("--files-per-package", type=int, default=60)
    ap.add_argument("--chunks-per-file", type=int, default=3)
    ap.add_argument("--test-pairs", type=int, default=260)
    ap.add_argument("--val-pairs", type=int, default=200)
    ap.add_argument("--synth", type=int, default=8000, help="composed functions in train (a tenth in val)")
    ap.add_argument("--extra-train", default="",
                    help="comma-separated seen blind variants whose templates join variant a in train "
                         f"(of {','.join(EXTRA_TRAIN)}; they then stop being validation data)")
    ap.add_argument("--compose-pairs", type=int, default=12000,
                    help="combinatorial vulnerable/fixed pairs appended to train (0 = the previous corpus)")
    args = ap.parse_args()
    rng = random.Random(SEED)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    pkgs = package_files()
    hosts: dict[str, list[tuple[str, str]]] = {"train": [], "val": [], "test": []}
    for pkg in sorted(pkgs):
        files = pkgs[pkg]
        sample = files if len(files) <= args.files_per_package else rng.sample(files, args.files_per_package)
        for f in sample:
            try:
                text = f.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for c in chunks(text, rng, args.chunks_per_file):
                hosts[split_of(pkg)].append((pkg, c))
    print({k: len(v) for k, v in hosts.items()}, "hosts;", len({p for p in pkgs}), "packages", flush=True)
    counts = {}
    tr_tpl = templates("train")
    for x in filter(None, args.extra_train.split(",")):
        if x not in EXTRA_TRAIN:
            raise SystemExit(f"--extra-train: {x!r} is not one of {','.join(EXTRA_TRAIN)}")
        tr_tpl = tr_tpl + registry.templates(x)
    te_tpl = templates("test")
    va_tpl = templates("val")
    # train: every host, half with an injected train template (vulnerable or fixed)
    with open(out / "train.jsonl", "w") as fh:
        for i, (pkg, host) in enumerate(hosts["train"]):
            r = rng.random()
            stmt = inject_statement(host, rng.choice(FAMILIES), rng.random() < 0.5, rng) if r < 0.3 else None
            if stmt is not None:
                code, bad = stmt
                item = make_statement_item(code, bad, host, pkg)
            elif r < 0.65:
                tpl = rng.choice(tr_tpl)
                vul = rng.random() < 0.5
                code, bad, span, _ = injected(host, tpl, vul, rng.randrange(1 << 30))
                item = make_item(code, pkg, "train", tpl, vul, bad, span)
            else:
                item = make_item(host, pkg, "train")
            fh.write(json.dumps(item) + "\n")
            if i % 2000 == 0:
                print("train", i, f"{time.time() - t0:.0f}s", flush=True)
        # standalone renders (no host), as an assistant would emit them
        for k in range(600):
            tpl = tr_tpl[k % len(tr_tpl)]
            vul = (k // len(tr_tpl)) % 2 == 0
            code, bad, span, _ = injected("", tpl, vul, rng.randrange(1 << 30))
            fh.write(json.dumps(make_item(code, "standalone", "train", tpl, vul, bad, span)) + "\n")
        n_syn = write_synth(fh, hosts["train"], "train", args.synth, rng)
    counts["train"] = len(hosts["train"]) + 600 + n_syn
    for split, tpls, n_pairs in (("val", va_tpl, args.val_pairs), ("test", te_tpl, args.test_pairs)):
        pool = hosts[split]
        rng.shuffle(pool)
        written = 0
        with open(out / f"{split}.jsonl", "w") as fh:
            clean_hosts = []
            for pkg, host in pool:
                if len(clean_hosts) >= n_pairs:
                    break
                lines = host.splitlines()[:40]  # generated-code sized hosts
                h = "\n".join(lines).rstrip() + "\n"
                if not label_findings(h) and _parses(h):
                    clean_hosts.append((pkg, h))
            for p in range(n_pairs):
                tpl = tpls[p % len(tpls)]
                standalone = p % 3 == 0 or not clean_hosts
                pkg, host = ("standalone", "") if standalone else clean_hosts[p % len(clean_hosts)]
                seed = rng.randrange(1 << 30)
                for vul in (True, False):
                    code, bad, span, _ = injected(host, tpl, vul, seed)
                    fh.write(json.dumps(make_item(code, pkg, split, tpl, vul, bad, span, pair=p)) + "\n")
                    written += 1
            if split == "val":  # calibration must also see composed code, not only a/b templates
                written += write_synth(fh, hosts["val"], "val", args.synth // 10, rng)
        counts[split] = written
    if args.compose_pairs:
        with open(out / "train.jsonl", "a") as fh:
            n_comp = write_composed(fh, hosts["train"], args.compose_pairs, SEED + 1)
        counts["train"] += n_comp
        counts["train_composed_pairs_items"] = n_comp
    (out / "SUMMARY.json").write_text(json.dumps({"counts": counts, "seed": SEED, "seconds": round(time.time() - t0, 1),
                                                  "hosts": {k: len(v) for k, v in hosts.items()}}, indent=2))
    print(counts, f"{time.time() - t0:.0f}s")


def _parses(text: str) -> bool:
    import ast
    try:
        ast.parse(text)
        return True
    except SyntaxError:
        return False


if __name__ == "__main__":
    main()
