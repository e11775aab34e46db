"""Static check of Python snippets, run by errata-snippets' static tier.

stdin:  JSON list of {"id": str, "code": str, "torch_implicit": bool}
stdout: JSON list of {"id", "syntax_error": null | {"line", "col", "msg"},
                      "chains": [{"chain": "torch.cuda.foo", "line": n}]}

Only parses (`ast`); never imports or runs the snippet. A chain is the longest
`a.b.c` attribute path whose root is bound to torch (`import torch`, `import torch as
th`, `from torch import cuda`, `from torch.cuda import x` …); `torch_implicit` binds the
name `torch` when the fragment does not import it (harness=python-torch, or fragments
that assume it).
"""
import ast
import json
import sys


def chains_of(tree, implicit):
    aliases = {}  # local name -> torch dotted path
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch" or a.name.startswith("torch."):
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        aliases["torch"] = "torch"
                        found.append((a.name, node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "torch" or node.module.startswith("torch."):
                for a in node.names:
                    if a.name == "*":
                        continue
                    full = node.module + "." + a.name
                    aliases[a.asname or a.name] = full
                    found.append((full, node.lineno))
    if implicit and "torch" not in aliases:
        aliases["torch"] = "torch"
    # Names rebound by assignment are no longer torch (e.g. `torch = None`): rare, ignored.
    inner = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            parts = []
            cur = node
            while isinstance(cur, ast.Attribute):
                inner.add(id(cur))
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id in aliases:
                found.append((".".join([aliases[cur.id]] + parts[::-1]), node.lineno))
    seen = set()
    out = []
    for chain, line in sorted(found, key=lambda c: (c[1], c[0])):
        if chain not in seen:
            seen.add(chain)
            out.append({"chain": chain, "line": line})
    return out


def main():
    items = json.load(sys.stdin)
    out = []
    for item in items:
        res = {"id": item["id"], "syntax_error": None, "chains": []}
        try:
            tree = ast.parse(item["code"])
        except SyntaxError as e:
            res["syntax_error"] = {"line": e.lineno or 0, "col": e.offset or 0, "msg": e.msg}
        except ValueError as e:  # e.g. NUL bytes
            res["syntax_error"] = {"line": 0, "col": 0, "msg": str(e)}
        else:
            res["chains"] = chains_of(tree, item.get("torch_implicit", False))
        out.append(res)
    json.dump(out, sys.stdout)


main()
