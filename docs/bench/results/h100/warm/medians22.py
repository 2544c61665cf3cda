import re,sys,statistics,collections
d=collections.defaultdict(list); v=None
for line in open(sys.argv[1]):
    m=re.match(r'^== (\S+)',line)
    if m: v=m.group(1); continue
    m=re.match(r'^(\S+) (Auto|Gpu) run (\d+): wall (\S+) solve (\S+) strategies (\S+)',line)
    if m and m.group(3)!='1':
        k=(m.group(1)[:20],m.group(2),v)
        d[k+('wall',)].append(float(m.group(4)))
        d[k+('solve',)].append(float(m.group(5)))
        f=re.search(r'faults (\d+)',line)
        if f: d[k+('faults',)].append(float(f.group(1)))
        e=re.search(r'evaluation (\S+)',line)
        if e: d[k+('evaluation',)].append(float(e.group(1)))
for k in sorted(d):
    xs=d[k]; print(f"{k[0]:20} {k[1]:4} {k[2]:5} {k[3]:10} med {statistics.median(xs):.4f} min {min(xs):.4f} max {max(xs):.4f} n {len(xs)}")
