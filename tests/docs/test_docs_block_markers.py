"""The docs runner reads fences and their markers as the docs convention says."""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_blocks import MarkerError, blocks

PAGE = """\
# A page

```python
a = 1
```

<!-- docs-test: typecheck -->
```python
manager.run()
```

<!-- docs-test: envtest -->
```py
client = AsyncClient(load_config())
```

<!-- docs-test: skip: needs a real cloud -->
```python
bucket.delete()
```

<!-- an unrelated comment -->
```python
b = 2
```

```bash
python -m kubectrl init foo
```

- in a list:

  ```python
  c = 3
  ```

````markdown
```python
not_a_block = True
```
````
"""


def _write(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_modes_sources_and_lines(tmp_path: Path) -> None:
    found = blocks(_write(tmp_path, PAGE))
    assert [(b.mode, b.argument, b.source, b.line) for b in found] == [
        ("run", "", "a = 1\n", 4),
        ("typecheck", "", "manager.run()\n", 9),
        ("envtest", "", "client = AsyncClient(load_config())\n", 14),
        ("skip", "needs a real cloud", "bucket.delete()\n", 19),
        ("run", "", "b = 2\n", 24),
        ("run", "", "c = 3\n", 34),
    ]


def test_file_blocks_carry_their_path(tmp_path: Path) -> None:
    page = _write(tmp_path, "<!-- file: pkg/api.py -->\n```python\nx = 1\n```\n")
    (block,) = blocks(page)
    assert (block.mode, block.argument) == ("file", "pkg/api.py")


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("<!-- docs-test: skip -->", "needs a reason"),
        ("<!-- docs-test: skip: -->", "needs a reason"),
        ("<!-- docs-test: run-twice -->", "unknown directive `docs-test: run-twice`"),
        ("<!-- file: -->", "needs a relative path"),
    ],
)
def test_bad_markers_are_named_with_their_line(tmp_path: Path, marker: str, message: str) -> None:
    page = _write(tmp_path, f"text\n{marker}\n```python\nx = 1\n```\n")
    with pytest.raises(MarkerError, match=message) as caught:
        blocks(page)
    assert f"{page}:2:" in str(caught.value)
