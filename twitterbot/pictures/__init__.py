"""Pictures: the user's own images and the jobs' drawings, made ready for each network.

`prepare.py` fits one image file to one network's limits (turned upright, every bit of metadata
dropped, scaled and re-encoded only as far as needed); `limits.py` holds what each network
accepts; `draw.py` holds the few drawing helpers the jobs' pictures share. Pillow is imported
inside the functions that need it, never by importing this package: a text-only run never loads it.
"""
