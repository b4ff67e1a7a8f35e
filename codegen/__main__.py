"""``python -m codegen [--check]``: rebuild ``generated/acp_v1`` from ``schema/``.

``--check`` renders into memory and diffs against the committed files, writing nothing;
it exits 1 (naming each stale file) when they differ.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from .build import build

ROOT = Path(__file__).resolve().parent.parent


def _unproduced(out: Path, files: dict[str, str]) -> list[str]:
    """Python files codegen no longer produces (paths relative to ``out``), looked for only
    in the folders it writes to: never anywhere else below ``out``."""
    folders = {(out / name).parent for name in files}
    found = (p.relative_to(out).as_posix() for d in folders for p in d.glob("*.py"))
    return sorted(name for name in found if name not in files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    parser.add_argument("--schema-dir", type=Path, default=ROOT / "schema")
    parser.add_argument("--out", type=Path, default=ROOT / "generated" / "acp_v1")
    parser.add_argument("--package", default="acp_v1", help="import name of the generated package")
    parser.add_argument(
        "--check", action="store_true", help="diff against the committed output, write nothing"
    )
    args = parser.parse_args(argv)
    files = build(args.schema_dir, args.package)
    out: Path = args.out
    if args.check:
        stale = []
        for name, text in sorted(files.items()):
            path = out / name
            current = path.read_text() if path.exists() else ""
            if current != text:
                stale.append(name)
                diff = difflib.unified_diff(
                    current.splitlines(),
                    text.splitlines(),
                    str(path),
                    "regenerated",
                    lineterm="",
                    n=1,
                )
                sys.stdout.write("\n".join(list(diff)[:40]) + "\n")
        extra = _unproduced(out, files)
        for name in extra:
            print(f"{out / name}: not produced by codegen")
        if stale or extra:
            print(
                f"generated/ is stale ({len(stale) + len(extra)} files); run `make regen`",
                file=sys.stderr,
            )
            return 1
        print(f"generated/ is up to date ({len(files)} files)")
        return 0
    for name in _unproduced(out, files):
        (out / name).unlink()
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    print(f"wrote {len(files)} files to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
