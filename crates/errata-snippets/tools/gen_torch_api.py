"""Build the torch API name list from a torch wheel's own .py/.pyi sources.

Run by `cargo xtask gen-torch-api`; reads the wheel with zipfile and parses every
module with `ast` (nothing is imported, so no GPU or torch install is needed).

Output (stdout), one name per line, sorted: `<qualified name>\t<kind>` where kind is
  module  a module or package (its attributes are known: missing ones are errors)
  class   a class whose members (and its bases' members, when they resolve) are known
  open    a module or class whose attributes cannot be enumerated statically
  value   anything else (function, constant, re-export of unknown kind)
  alias   `<name>\talias\t<target>`: a re-export of the module or class `target`
Names with a private component (`torch._foo`) are kept only where a public alias needs
them; a chain through an unlisted private name is not judged.

Usage: gen_torch_api.py WHEEL
"""
import ast
import importlib
import sys
import zipfile

wheel = sys.argv[1]
zf = zipfile.ZipFile(wheel)

# module name -> {"names": {name: (kind, target)}, "star": [module], "all": set|None,
#                 "getattr": "open"|"closed"|None}
modules = {}
classes = {}  # qualified class name -> {"members": set, "bases": [dotted], "module": mod}


def module_name(path):
    parts = path[:-4 if path.endswith(".pyi") else -3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def resolve_relative(mod, is_pkg, level, target):
    if level == 0:
        return target or ""
    base = mod.split(".")
    if not is_pkg:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def literal_strings(node):
    out = set()
    if isinstance(node, ast.Dict):
        for k in node.keys:
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                out.add(k.value)
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for e in node.elts:
            if isinstance(e, ast.Constant) and isinstance(e.value, str):
                out.add(e.value)
    return out


def walk_body(mod, is_pkg, body, info, literals):
    """Top-level statements, descending into if/try/with blocks (TYPE_CHECKING etc.)."""
    names = info["names"]
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == "__getattr__":
                last = node.body[-1] if node.body else None
                closed = isinstance(last, ast.Raise)
                info["getattr"] = "closed" if closed else "open"
                if closed:
                    # Names served from literal tables (`_lazy_modules`, `_deprecated_attrs`).
                    for sub in ast.walk(node):
                        if isinstance(sub, ast.Name) and sub.id in literals:
                            info["extra"] |= literals[sub.id]
            else:
                names[node.name] = ("value", None)
        elif isinstance(node, ast.ClassDef):
            q = mod + "." + node.name
            names[node.name] = ("class", q)
            members = set()
            for item in ast.walk(node):
                if item is node:
                    continue
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    members.add(item.name)
                elif isinstance(item, ast.Assign):
                    for t in item.targets:
                        if isinstance(t, ast.Name):
                            members.add(t.id)
                        elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            members.add(t.attr)
                elif isinstance(item, ast.AnnAssign):
                    t = item.target
                    if isinstance(t, ast.Name):
                        members.add(t.id)
                    elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        members.add(t.attr)
            bases = [ast.unparse(b) for b in node.bases]
            dynamic = any(isinstance(k, ast.keyword) and k.arg == "metaclass" for k in node.keywords)
            classes[q] = {"members": members, "bases": bases, "module": mod, "dynamic": dynamic}
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        names.setdefault(n.id, ("value", None))
                        literals[n.id] = literal_strings(node.value)
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                info["all"] = (info["all"] or set()) | literal_strings(node.value)
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name) and node.target.id == "__all__":
                info["all"] = (info["all"] or set()) | literal_strings(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.setdefault(node.target.id, ("value", None))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = ("alias", a.name)
                # `import torch.cuda` binds `torch`, nothing new inside this module.
        elif isinstance(node, ast.ImportFrom):
            src = resolve_relative(mod, is_pkg, node.level, node.module)
            for a in node.names:
                if a.name == "*":
                    info["star"].append(src)
                else:
                    names[a.asname or a.name] = ("alias", src + "." + a.name)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for part in ("body", "orelse", "finalbody"):
                walk_body(mod, is_pkg, getattr(node, part, []) or [], info, literals)
            for h in getattr(node, "handlers", []) or []:
                walk_body(mod, is_pkg, h.body, info, literals)


for path in sorted(zf.namelist()):
    if not path.startswith("torch/") or not (path.endswith(".py") or path.endswith(".pyi")):
        continue
    try:
        tree = ast.parse(zf.read(path).decode("utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        continue  # templates such as *.pyi.in are not Python
    mod = module_name(path)
    is_pkg = path.endswith("/__init__.py") or path.endswith("/__init__.pyi")
    info = modules.setdefault(mod, {"names": {}, "star": [], "all": None, "getattr": None, "extra": set()})
    walk_body(mod, is_pkg, tree.body, info, {})

# torch/__init__.py copies every name of torch._C._VariableFunctions into `torch` with a
# `globals()[name] = …` loop; its TYPE_CHECKING star import (handled above) mirrors it.

# Parent packages see their submodules as attributes.
for mod in list(modules):
    parts = mod.split(".")
    for i in range(1, len(parts)):
        parent = ".".join(parts[:i])
        modules.setdefault(parent, {"names": {}, "star": [], "all": None, "getattr": None, "extra": set()})
        modules[parent]["names"].setdefault(parts[i], ("module", ".".join(parts[: i + 1])))


def stdlib_public_names(mod):
    """Names `from <mod> import *` brings in when `mod` is part of Python's standard library
    (torch.multiprocessing re-exports multiprocessing's Process, Queue, get_context, …).
    They come from the interpreter running this script, not from the wheel."""
    if mod.partition(".")[0] not in sys.stdlib_module_names:
        return set()
    try:
        m = importlib.import_module(mod)
    except ImportError:
        return set()
    names = getattr(m, "__all__", None)
    if names is None:
        names = dir(m)
    return {n for n in names if isinstance(n, str) and not n.startswith("_")}


def public_names(mod, seen):
    """Names a star import of `mod` brings in."""
    info = modules.get(mod)
    if info is None:
        return stdlib_public_names(mod)
    if mod in seen:
        return set()
    seen = seen | {mod}
    if info["all"] is not None:
        return set(info["all"])
    out = {n for n in all_names(mod, seen) if not n.startswith("_")}
    return out


_all_cache = {}


def all_names(mod, seen=frozenset()):
    if mod in _all_cache:
        return _all_cache[mod]
    info = modules[mod]
    out = set(info["names"]) | info["extra"] | (info["all"] or set())
    for src in info["star"]:
        out |= public_names(src, seen | {mod})
    _all_cache[mod] = out
    return out


def kind_of(mod, name, depth=0):
    """Kind and qualified target of `mod.name`, following aliases."""
    q = mod + "." + name
    if q in modules:
        return "module", q
    info = modules.get(mod)
    if info is None or depth > 20:
        return "value", None
    entry = info["names"].get(name)
    if entry is None:
        for src in info["star"]:
            if src in modules and name in all_names(src):
                return kind_of(src, name, depth + 1)
        return "value", None
    kind, target = entry
    if kind == "alias" and target:
        if target in modules:
            return "module", target
        parent, _, leaf = target.rpartition(".")
        if parent in modules:
            return kind_of(parent, leaf, depth + 1)
        return "value", None
    return kind, target


def class_members(q, seen=frozenset()):
    """Members of a class, or None when some base cannot be resolved (open class)."""
    c = classes.get(q)
    if c is None or q in seen or c["dynamic"]:
        return None
    out = set(c["members"])
    for b in c["bases"]:
        if b in ("object", "Generic", "Protocol", "NamedTuple") or b.startswith(("Generic[", "Protocol[")):
            continue
        head, _, rest = b.partition(".")
        kind, target = kind_of(c["module"], head)
        for part in [p for p in rest.split(".") if p]:
            if kind != "module":
                kind, target = "value", None
                break
            kind, target = kind_of(target, part)
        if kind != "class" or target is None:
            return None
        sub = class_members(target, seen | {q})
        if sub is None:
            return None
        out |= sub
    return out


lines = {}  # name -> (kind, alias target or None)


def add(name, kind, target=None):
    rank = {"value": 1, "alias": 2, "class": 3, "module": 4, "open": 5}
    old = lines.get(name)
    if old is None or rank[kind] > rank[old[0]]:
        lines[name] = (kind, target)


for mod, info in modules.items():
    add(mod, "open" if info["getattr"] == "open" else "module")
    for name in all_names(mod):
        kind, target = kind_of(mod, name)
        q = mod + "." + name
        if kind in ("class", "module") and target is not None and target != q:
            add(q, "alias", target)
        elif kind == "module":
            pass  # listed under its own name
        else:
            add(q, "value")

for q in classes:
    members = class_members(q)
    if members is None:
        add(q, "open")
    else:
        add(q, "class")
        for m in members:
            add(q + "." + m, "value")


def private(name):
    return any(part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
               for part in name.split(".")[1:])


# Keep the public API, plus whatever public aliases point into (torch.Tensor is
# torch._tensor.Tensor), so the list stays small enough to commit.
keep = set()
stack = [n for n in lines if not private(n)]
while stack:
    n = stack.pop()
    if n in keep or n not in lines:
        continue
    keep.add(n)
    kind, target = lines[n]
    if kind == "alias" and target:
        stack.append(target)
        if lines.get(target, ("",))[0] == "class":
            prefix = target + "."
            stack.extend(target + '.' + m for m in (class_members(target) or ()) if not private('x.' + m))

for name in sorted(keep):
    kind, target = lines[name]
    print(f"{name}\t{kind}\t{target}" if target else f"{name}\t{kind}")
