"""Finding the posenc CLI: the package has no judge of its own, it asks `posenc serve`."""
import os
import shutil

from .errors import PosencError


def find_cli(cli=None):
    """The posenc executable: `cli` if given, else $POSENC_CLI, else `posenc` on PATH, else the
    CLI installed with this package (PREFIX/bin/posenc)."""
    if cli is not None:
        return _checked(str(cli), "the cli argument")
    env = os.environ.get("POSENC_CLI")
    if env:
        return _checked(env, "POSENC_CLI")
    found = shutil.which("posenc")
    if found:
        return found
    # Installed by cmake --install: this package in PREFIX/share/posenc/python, the CLI in PREFIX/bin.
    beside = os.path.join(os.path.dirname(__file__), *[os.pardir] * 4, "bin", "posenc")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return os.path.normpath(beside)
    raise PosencError(
        "cannot find the posenc CLI: set POSENC_CLI to its path (e.g. build/posenc) "
        "or put `posenc` on PATH (cmake --install puts it in PREFIX/bin)")


def _checked(path, where):
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    found = shutil.which(path)
    if found:
        return found
    raise PosencError(f"{where} = {path!r} is not an executable posenc CLI")
