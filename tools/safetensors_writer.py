"""Writes float32 safetensors fixtures for the C++ tests (the format of docs/protocols/safetensors.md)."""
import json
import struct


def safetensors_bytes(tensors, metadata):
    header, blobs, offset = {'__metadata__': metadata}, [], 0
    for name, t in tensors.items():
        a = t.detach().contiguous().numpy() if hasattr(t, 'detach') else t   # a torch tensor or a NumPy array
        b = a.astype('<f4').tobytes()
        header[name] = {'dtype': 'F32', 'shape': list(t.shape), 'data_offsets': [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    return struct.pack('<Q', len(text)) + text + b''.join(blobs)
