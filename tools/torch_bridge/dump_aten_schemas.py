"""Writes the schemas of the aten ops mpsim.torch maps (python/mpsim/torch/_aten.py), every
overload, as this machine's PyTorch declares them:

    python3 tools/torch_bridge/dump_aten_schemas.py OUT.json

tests/fixtures/torch/aten_schemas_2.11.json is its output under PyTorch 2.11 (the GPU machine);
tests/python/test_torch_bridge.py reads the attention ops' argument positions from it, as
mpsim.torch does from the live schema."""

import json
import pathlib
import re
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main(out):
    source = (ROOT / "python" / "mpsim" / "torch" / "_aten.py").read_text()
    names = sorted(set(re.findall(r'"(_?[a-z][a-z0-9_]*)"', source)))
    schemas = {}
    for name in names:
        packet = getattr(torch.ops.aten, name, None)
        if packet is None or not hasattr(packet, "overloads"):
            continue
        schemas[name] = [str(getattr(packet, o)._schema) for o in sorted(packet.overloads())]
    pathlib.Path(out).write_text(json.dumps({"torch": torch.__version__, "schemas": schemas},
                                            indent=1, sort_keys=True))
    print(torch.__version__, len(schemas), "ops")


if __name__ == "__main__":
    main(sys.argv[1])
