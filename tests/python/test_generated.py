"""What python/gen_stub.py generates from the op declarations is checked in and current: the
type stub python/mpsim/__init__.pyi and docs/op-signatures.md."""

import ast
import importlib.util
import pathlib

import mpsim

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_stub", ROOT / "python" / "gen_stub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_files_are_current():
    for path, text in _generator().outputs(mpsim).items():
        assert path.read_text() == text, (
            f"{path.relative_to(ROOT)} is stale: regenerate with "
            "PYTHONPATH=build/python /usr/bin/python3 python/gen_stub.py")


def _stub_functions():
    tree = ast.parse((ROOT / "python" / "mpsim" / "__init__.pyi").read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    tensor = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    methods = {n.name: n for n in tensor.body if isinstance(n, ast.FunctionDef)}
    return functions, methods


def test_stub_declares_every_op_with_its_keyword_arguments():
    functions, methods = _stub_functions()
    for sig in mpsim._C._signatures:
        name = sig["name"]
        assert name in functions, name
        stub_args = [a.arg for a in functions[name].args.args]
        assert stub_args == [a[0] for a in sig["args"]], name
        # Defaults: the trailing arguments that have one, as many as the op declares.
        assert len(functions[name].args.defaults) == sum(a[2] for a in sig["args"]), name
        if sig["args"] and sig["args"][0][1] == "Tensor" and not hasattr(mpsim._C.Tensor, name):
            assert [a.arg for a in methods[name].args.args] == ["self"] + stub_args[1:], name


def test_stub_defaults_are_the_declared_ones():
    functions, _ = _stub_functions()
    softplus = functions["softplus"].args
    assert [ast.literal_eval(d) for d in softplus.defaults] == [1, 20]
    conv = functions["conv2d"].args
    assert [a.arg for a in conv.args][-1] == "groups"
    assert ast.literal_eval(conv.defaults[-1]) == 1
    assert ast.literal_eval(functions["layer_norm"].args.defaults[-1]) == 1e-5
