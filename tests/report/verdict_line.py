#!/usr/bin/env python3
"""Prints the verdict a gpuvet report page opens with, as text: "HEAD: WHY" of its
first <p class="verdict"> (the words the command's own verdict line prints; both come
from src/report/verdict.c). Standard library only.

  verdict_line.py PAGE.html"""
import html
import re
import sys

page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<p class="verdict[^"]*"[^>]*>.*?<b>(.*?)</b>(?:<span class="why">: (.*?)</span>)?', page, re.S)
if not m:
    sys.exit("%s: no verdict on the page" % sys.argv[1])
head, why = (html.unescape(x) if x else "" for x in m.groups())
print(head + (": " + why if why else ""))
