"""Vectors for a Hugging Face model's config.json.

`posenc generate --hf-config FILE --out DIR` writes that model's vectors with a MANIFEST; this
runs it and returns the folder, for Session(vectors=DIR, own_vectors=True). (A session can also
be opened on the config itself: Session(hf_config=FILE), which `posenc serve --hf-config` judges.)
The mapping from config.json to posenc's parameters is the CLI's alone: Python keeps no copy."""
import subprocess

from ._cli import find_cli
from .errors import PosencError


def generate_hf_vectors(config_json, out_dir, cli=None, name=None):
    """Writes rope/NAME.json and a MANIFEST in out_dir; NAME: `name`, or by default the config's
    _name_or_path (its last part), else its model_type."""
    cli = find_cli(cli)
    args = [cli, "generate", "--hf-config", str(config_json), "--out", str(out_dir)]
    if name is not None:
        args += ["--name", str(name)]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        raise PosencError(f"posenc generate --hf-config {config_json}: {run.stderr.strip()} "
                          "(this posenc may predate --hf-config)")
    return str(out_dir)
