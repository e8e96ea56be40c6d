"""Compare takt msggen's ROS 1 md5sums and full definitions with genmsg's, for every message and
service of the given packages. Run under Debian's /usr/bin/python3 (genmsg lives there).
usage: md5_genmsg.py TAKT_PYTHON_DIR [--root DIR] PKG...   prints a JSON report
The packages are DIR/PKG/{msg,srv} (default DIR: /usr/share); other packages are /usr/share's."""

import json
import sys
from pathlib import Path

sys.path.insert(0, sys.argv[1])
import genmsg  # noqa: E402
import genmsg.gentools as gt  # noqa: E402
import genmsg.msg_loader as ml  # noqa: E402

from takt.msggen import ros1  # noqa: E402
from takt.msggen.spec import Registry, parse_srv_file  # noqa: E402

args = sys.argv[2:]
root = "/usr/share"
if args[:1] == ["--root"]:
    root, args = args[1], args[2:]
pkgs = args
others = [d.name for d in Path("/usr/share").iterdir() if (d / "msg").is_dir() and d.name not in pkgs]
reg = Registry({**{p: [Path(f"/usr/share/{p}/msg")] for p in others}, **{p: [Path(f"{root}/{p}/msg")] for p in pkgs}})
cache = {}
ctx = genmsg.MsgContext.create_default()
gsearch = {**{p: [f"/usr/share/{p}/msg", f"/usr/share/{p}/srv"] for p in others},
           **{p: [f"{root}/{p}/msg", f"{root}/{p}/srv"] for p in pkgs}}
report = {"messages": 0, "services": 0, "failures": []}
for p in pkgs:
    for f in sorted(Path(f"{root}/{p}/msg").glob("*.msg")):
        spec = reg.load_msg(f"{p}/{f.stem}")
        g = ml.load_msg_by_type(ctx, f"{p}/{f.stem}", gsearch)
        ml.load_depends(ctx, g, gsearch)
        if ros1.md5(reg, spec, cache) != gt.compute_md5(ctx, g):
            report["failures"].append(f"{p}/{f.stem}: md5")
        elif ros1.full_text(reg, spec) != gt.compute_full_text(ctx, g):
            report["failures"].append(f"{p}/{f.stem}: full text")
        else:
            report["messages"] += 1
    for f in sorted(Path(f"{root}/{p}/srv").glob("*.srv")):
        srv = parse_srv_file(f, p)
        reg.add_srv(srv)
        g = ml.load_srv_by_type(ctx, f"{p}/{f.stem}", gsearch)
        ml.load_depends(ctx, g, gsearch)
        if ros1.srv_md5(reg, srv, cache) != gt.compute_md5(ctx, g):
            report["failures"].append(f"{p}/{f.stem}: srv md5")
        else:
            report["services"] += 1
print(json.dumps(report))
