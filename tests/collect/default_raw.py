#!/usr/bin/env python3
"""default_raw.py [SEP] - the raw CUPTI metrics of roofkit's default set, read from
collect/metrics.c (the aliases between "the default set" and "by name (each"), joined by SEP
(default ","). For the device scripts that give ncu the same metrics as roofkit (no GPU and no
roofkit build needed)."""
import os
import re
import sys

src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "collect",
                        "metrics.c")).read()
defs = dict(re.findall(r'#define (\w+) "([^"]+)"', src))
default = src[src.index("the default set"):src.index("by name (each")]
names = re.findall(r'"([a-z0-9_]+__[a-z0-9_.]+)"', default)
names += [defs[m] for m in re.findall(r'\b(FADD|FMUL|FFMA|DADD|DMUL|DFMA|HADD|HMUL|HFMA)\b', default)]
print((sys.argv[1] if len(sys.argv) > 1 else ",").join(dict.fromkeys(names)))
