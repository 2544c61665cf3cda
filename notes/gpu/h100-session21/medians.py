import re,sys,statistics,collections
d=collections.defaultdict(list); v=None
for line in open(sys.argv[1]):
    m=re.match(r'^== (\S+)',line)
    if m: v=m.group(1); continue
    m=re.match(r'^(\S+) (Auto|Gpu) run (\d+): wall (\S+) solve (\S+) strategies (\S+)',line)
    if m and m.group(3)!='1':
        d[(m.group(1)[:20],m.group(2),v,'wall')].append(float(m.group(4)))
        d[(m.group(1)[:20],m.group(2),v,'solve')].append(float(m.group(5)))
for k in sorted(d):
    xs=d[k]; print(f"{k[0]:20} {k[1]:4} {k[2]:5} {k[3]:5} med {statistics.median(xs):.4f} min {min(xs):.4f} max {max(xs):.4f} n {len(xs)}")
