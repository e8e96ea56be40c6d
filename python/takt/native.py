"""Locating the native programs that `make` builds (takt-run, benchmark binaries) and the data the
commands use (example systems).

Three layouts, first match wins:
- TAKT_BUILD_DIR set: that build directory (programs at their place in the build tree);
- an installed takt (`cmake --install`, `make install`): takt/install_layout.py, written by the
  install, names PREFIX/libexec/takt for the programs and PREFIX/share/takt for the data;
- a source tree: its release build, build/release, and the tree itself for the data.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional


class NativeMissing(RuntimeError):
    """A native program is not built."""


def repo_root() -> Path:
    """The source tree this package lives in (python/takt/ -> repository root)."""
    return Path(__file__).resolve().parent.parent.parent


def _installed_dir(name: str) -> Optional[Path]:
    """PREFIX/libexec/takt ("LIBEXEC") or PREFIX/share/takt ("DATA") of an installed takt."""
    try:
        from takt import install_layout  # type: ignore[attr-defined]
    except ImportError:
        return None
    return (Path(__file__).resolve().parent / getattr(install_layout, name)).resolve()


def build_dir() -> Path:
    """TAKT_BUILD_DIR if set, else the release build `make` produces."""
    env = os.environ.get("TAKT_BUILD_DIR")
    return Path(env) if env else repo_root() / "build" / "release"


def data_dir() -> Path:
    """Where examples/ is: PREFIX/share/takt when installed, else the source tree."""
    return _installed_dir("DATA") or repo_root()


def program(relpath: str) -> Path:
    """Path of a native program (relpath: its place in the build tree, e.g. tools/takt-run), or
    NativeMissing naming the fix."""
    libexec = None if os.environ.get("TAKT_BUILD_DIR") else _installed_dir("LIBEXEC")
    if libexec is not None:
        path = libexec / Path(relpath).name
        if not path.is_file() or not os.access(path, os.X_OK):
            raise NativeMissing(f"{path} is not installed (an installed takt has takt-run and takt-sizes; "
                                "benchmarks run from a source tree, or set TAKT_BUILD_DIR to a build)")
        return path
    path = build_dir() / relpath
    if not path.is_file() or not os.access(path, os.X_OK):
        raise NativeMissing(f"{path} is not built: run `make` in {repo_root()} (or set TAKT_BUILD_DIR)")
    return path
