# vtread.py begin
import numpy as np
DT = dict(u8='u1', i8='i1', u16='<u2', i32='<i4', i64='<i8', f32='<f4', f64='<f8')
def vtread(f):
    """vitpipe stream from binary file f -> (header dict, iterator of records)."""
    if f.readline() != b'VITPIPE 1\n': raise ValueError('not a vitpipe stream')
    used, fields, head = 10, [], {}
    while (line := f.readline()) != b'ENDHDR\n':
        if not line: raise ValueError('truncated header')
        used += len(line); key, _, val = line.decode().rstrip('\n').partition(' ')
        if key == 'FIELD':
            name, dt, *dims = val.split(); fields.append((name, np.dtype(DT[dt]), dims))
        elif key and key[0] != '#': head.setdefault(key, []).append(val)
    pad = lambda n: -n % int(head['ALIGN'][0])
    f.read(pad(used + 7))
    ndyn = sum(d == '*' for _, _, dims in fields for d in dims)
    def records():
        while (pre := f.read(8 * ndyn + pad(8 * ndyn)) if ndyn else b'x'):
            dyn, rec = iter(np.frombuffer(pre[:8 * ndyn], '<i8').tolist()), {}
            for name, dt, dims in fields:
                shape = [next(dyn) if d == '*' else int(d) for d in dims]
                n = dt.itemsize * int(np.prod(shape)); buf = f.read(n + pad(n))
                if not buf and not rec and not ndyn: return
                if len(buf) < n: raise ValueError(f'field {name} truncated')
                rec[name] = np.frombuffer(buf[:n], dt).reshape(shape)
            yield rec
    return head, records()
# vtread.py end
