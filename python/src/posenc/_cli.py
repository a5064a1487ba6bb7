"""Finding the posenc CLI: the package has no judge of its own, it asks `posenc serve`."""
import os
import shutil

from .errors import PosencError

# Where the wheel of `pip install ./python` puts the CLI it built (python/pyproject.toml): inside
# the package, with the vectors it reads at _cli/share/posenc/vectors.
BUNDLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_cli", "bin", "posenc")


def find_cli(cli=None):
    """The posenc executable: `cli` if given, else $POSENC_CLI, else the CLI built into this
    package's wheel, else `posenc` on PATH, else the CLI installed beside this package by cmake
    --install (PREFIX/bin/posenc). The bundled CLI comes before PATH so that an installed package
    talks to the CLI of its own build, whatever other posenc is on PATH."""
    if cli is not None:
        return _checked(str(cli), "the cli argument")
    env = os.environ.get("POSENC_CLI")
    if env:
        return _checked(env, "POSENC_CLI")
    if os.path.isfile(BUNDLED) and os.access(BUNDLED, os.X_OK):
        return BUNDLED
    found = shutil.which("posenc")
    if found:
        return found
    # Installed by cmake --install: this package in PREFIX/share/posenc/python, the CLI in PREFIX/bin.
    beside = os.path.join(os.path.dirname(__file__), *[os.pardir] * 4, "bin", "posenc")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return os.path.normpath(beside)
    raise PosencError(
        "cannot find the posenc CLI: install the package with `pip install ./python` (which builds it in), "
        "set POSENC_CLI to its path (e.g. build/posenc) or put `posenc` on PATH (cmake --install puts it in PREFIX/bin)")


def _checked(path, where):
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    found = shutil.which(path)
    if found:
        return found
    raise PosencError(f"{where} = {path!r} is not an executable posenc CLI")
