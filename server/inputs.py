"""Every input checked before any work: the value checks that tabs, MCP tools and the server share,
and ``guard_inputs``, which runs them on each event's raw payloads before Gradio converts them.

``guard_inputs`` is the app's one replacement of a Gradio internal (``Blocks.preprocess_data``);
``tests/test_app.py`` pins the signature it wraps to the pinned Gradio release.
"""
from __future__ import annotations

import functools
import logging
import math
import re

import gradio as gr

from engines.common import InputError
from engines.common.numbers import plain_number

log = logging.getLogger("showcase.refused")

#: Longest piece of a user's input that a message quotes back (the rest is cut, never echoed).
ECHO_CHARS = 40
#: Longest error message sent to the browser.
MESSAGE_CHARS = 300
#: Text fields without their own ``max_length`` accept at most this many characters.
TEXT_MAX_CHARS = 1_000_000


def shorten(value: object, limit: int = ECHO_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters, so a message never echoes a long input back.

    >>> shorten("x" * 1000)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."
    """
    try:
        s = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails is still a bad input, not a crash
        s = f"<{type(value).__name__}>"
    return s if len(s) <= limit else s[: limit - 3] + "..."


def number(value: object, label: str, lo: float | None = None, hi: float | None = None,
           whole: bool = False, unit: str = "") -> float | int:
    """``value`` as a finite float (or int when ``whole``) within ``[lo, hi]``.

    Raises :class:`InputError` naming ``label`` for None, booleans, text that is not a number,
    NaN, infinities, values out of range and fractions where a whole number is needed.

    >>> number("3", "seeds", 1, 50, whole=True)
    3
    >>> number(float("nan"), "yaw (deg)")
    Traceback (most recent call last):
    ...
    engines.common.errors.InputError: yaw (deg) must be a finite number, not nan
    """
    if value is None or isinstance(value, bool):
        raise InputError(f"{label}: give a number")
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{label}: {shorten(value)} is not a number") from None
    if not math.isfinite(x):
        raise InputError(f"{label} must be a finite number, not {shorten(value)}")
    u = f" {unit}" if unit else ""
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        rng = (f"between {plain_number(lo)} and {plain_number(hi)}{u}" if lo is not None and hi is not None else
               f"at least {plain_number(lo)}{u}" if lo is not None else f"at most {plain_number(hi)}{u}")
        raise InputError(f"{label} must be {rng} (got {plain_number(x)})")
    if whole:
        if x != math.floor(x):
            raise InputError(f"{label} must be a whole number (got {plain_number(x)})")
        return int(x)
    return x


def _same(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):  # True == 1 in Python; not as a choice
        return a is b
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an odd object (array, dict) compares as not equal
        return False


def choice(value: object, label: str, options) -> object:
    """``value`` if it is one of ``options``; otherwise :class:`InputError` listing them (the value
    itself is quoted cut to ``ECHO_CHARS`` characters).

    >>> choice("fast", "mode", ["faithful", "fast"])
    'fast'
    """
    options = list(options)
    if not any(_same(value, o) for o in options):
        listed = ", ".join(str(o) for o in options)
        listed = listed if len(listed) <= 160 else listed[:157] + "..."
        if value is None:
            raise InputError(f"{label}: nothing chosen; choose one of: {listed}")
        raise InputError(f"{label}: {shorten(value)} is not one of the choices ({listed})")
    return value


def choices(values: object, label: str, options) -> list:
    """A list of values, each one of ``options`` (for a CheckboxGroup or multiselect)."""
    if values is None:
        return []
    if not isinstance(values, (list, tuple)):
        raise InputError(f"{label}: expected a list of choices, got {shorten(values)}")
    return [choice(v, label, options) for v in values]


def text(value: object, label: str, max_chars: int | None = TEXT_MAX_CHARS) -> str:
    """``value`` as text: None is empty; anything but a string, a string that is not valid UTF-8
    (a lone surrogate) or one longer than ``max_chars`` is refused with :class:`InputError`."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"{label} must be text, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"{label} is not valid UTF-8 text: character {exc.start + 1} is a lone "
                         f"surrogate (U+{ord(value[exc.start]):04X}); paste plain text") from None
    if max_chars is not None and len(value) > max_chars:
        raise InputError(f"{label} has {len(value):,} characters; the limit is {max_chars:,}")
    return value


def _label(block) -> str:
    return str(getattr(block, "label", None) or type(block).__name__)


#: A web address (``http://host/...``, ``//host/...``, any ``scheme://``): in a file argument Gradio
#: would look the host up and fetch it; this server takes uploaded files only.
_WEB_ADDRESS = re.compile(r"^\s*(?:[A-Za-z][A-Za-z0-9+.-]*:)?//")


def _file_addresses(payload: object, limit: int = 1000) -> list[str]:
    """The ``path`` strings of the file payloads (``{"path": ..., "meta": {"_type": "gradio.FileData"}}``)
    in ``payload``, however they are nested (at most ``limit`` values looked at). Gradio reads an input
    file from its ``path``; the ``url`` beside it (the browser sends this server's own) is not used."""
    found, stack, seen = [], [payload], 0
    while stack and seen < limit:
        value = stack.pop()
        seen += 1
        if isinstance(value, dict):
            found += [v for k, v in value.items() if k == "path" and isinstance(v, str)]
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return found


def check_files(label: str, payload: object) -> None:
    """Refuse a file argument that names a web address: Gradio would resolve its host (a DNS lookup)
    and download it, and no user input may make this server open a network connection."""
    for address in _file_addresses(payload):
        if _WEB_ADDRESS.match(address):
            raise InputError(f"{label}: give an uploaded file, not a web address (this server never "
                             "fetches one)")


def check_payload(block, payload):
    """Validate one raw input payload against its component (before Gradio converts it).

    Numbers (Slider, Number) must be JSON numbers (not text), finite and within the component's range, choices (Radio,
    Dropdown, CheckboxGroup) one of its choices, text (Textbox, Code) valid UTF-8 within its
    ``max_length``, check boxes true or false, files uploaded files (never a web address). Raises
    :class:`InputError` naming the label.
    """
    label = _label(block)
    check_files(label, payload)
    if isinstance(block, (gr.Slider, gr.Number)):
        if payload is None and isinstance(block, gr.Number):
            return
        if isinstance(payload, str):  # Gradio's conversion would fail on it and name no field
            raise InputError(f"{label}: {shorten(payload)} is text, not a number (send it without quotes)")
        number(payload, label, getattr(block, "minimum", None), getattr(block, "maximum", None))
    elif isinstance(block, gr.CheckboxGroup) or (isinstance(block, gr.Dropdown) and block.multiselect):
        if not getattr(block, "allow_custom_value", False):
            choices(payload, label, [v for _, v in block.choices])
    elif isinstance(block, (gr.Radio, gr.Dropdown)):
        if not getattr(block, "allow_custom_value", False):
            choice(payload, label, [v for _, v in block.choices])
    elif isinstance(block, (gr.Textbox, gr.Code)):
        text(payload, label, getattr(block, "max_length", None) or TEXT_MAX_CHARS)
    elif isinstance(block, gr.Checkbox) and not isinstance(payload, bool):
        raise InputError(f"{label} must be true or false, not {shorten(payload)}")


def cut_message(message: str) -> str:
    """``message`` stripped and cut to ``MESSAGE_CHARS`` characters (never empty)."""
    message = message.strip() or "the input could not be used"
    return message if len(message) <= MESSAGE_CHARS else message[: MESSAGE_CHARS - 3] + "..."


def refusal(where: str, message: str, detail: str = "") -> gr.Error:
    """The error that refuses an ordinary bad input: shown as ``message`` (cut to ``MESSAGE_CHARS``)
    and logged as one line naming ``where`` (an endpoint or tool) and ``detail`` (for the log only,
    e.g. an exception's class), without a traceback: the log keeps tracebacks for real faults."""
    message = cut_message(message)
    log.warning("refused %s: %s%s", where, message.replace("\n", " "), f" [{detail}]" if detail else "")
    return gr.Error(message, print_exception=False)


def guard_inputs(demo: gr.Blocks) -> gr.Blocks:
    """Check every event's raw inputs before Gradio converts them, for every tab at once.

    Gradio's own conversion runs before any callback: NaN in a whole-number slider, an undecodable
    image file or a value outside a dropdown's choices would fail there with an empty message (or
    echo a megabyte of input back). This wraps ``demo.preprocess_data`` so that each input is first
    checked by :func:`check_payload`, and any error while converting becomes a short message that
    names the field. Each refusal is one line in the log (``refusal``). Returns ``demo``.
    """
    original = demo.preprocess_data

    @functools.wraps(original)
    async def preprocess_data(block_fn, inputs, state, explicit_call: bool = False):
        where = block_fn.api_name or getattr(block_fn.fn, "__name__", "an event")
        blocks = list(block_fn.inputs)
        for i, block in enumerate(blocks):
            if i >= len(inputs) or getattr(block, "stateful", False):
                continue
            if state is not None and block._id in state:
                block = state[block._id]
            try:
                check_payload(block, inputs[i])
            except InputError as exc:
                raise refusal(where, str(exc)) from None
        try:
            return await original(block_fn, inputs, state, explicit_call)
        except gr.Error as exc:
            raise refusal(where, str(exc.message)) from None
        except Exception as exc:  # noqa: BLE001 - Gradio's conversion failed: say which field, never a trace
            files = [_label(b) for b in blocks if isinstance(b, (gr.Image, gr.File))]
            if files:  # the class name (UnidentifiedImageError, InvalidPathError) goes to the log only
                msg = f"could not read the file given for {', '.join(files)}: upload a PNG or JPEG image"
            else:
                msg = (f"could not read the input of {', '.join(_label(b) for b in blocks) or 'this action'}: "
                       "check the values and try again")
            raise refusal(where, msg, detail=type(exc.__cause__ or exc).__name__) from None

    demo.preprocess_data = preprocess_data
    return demo
