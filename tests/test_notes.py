"""The "How it works" pages (issue #48 item 10): written for a person using the tab, not developer
notes, and the figures they share with a tab are the tab's."""
from __future__ import annotations

import re

import pytest

from demos import notes


@pytest.mark.parametrize("engine", list(notes.NOTES))
def test_pages_read_for_a_person(engine):
    text = notes.text(engine)
    assert "```" not in text and "From Python" not in text and "{" not in text
    # module paths and issue numbers are developer talk: only the closing pointer names a file
    assert not re.search(r"engines/|evals/|issue #\d|\.py\b", text), engine
    assert "How to use it" in text and "For developers" in text


def test_the_guard_page_gives_the_head_size_the_tab_gives():
    from demos.guardrail import _head_md
    from engines.guardrail import head_info

    advanced = re.search(r"A ([\d.]+) M-parameter", _head_md(head_info())).group(1)
    assert f"{advanced} M parameters" in notes.text("guardrail")
