"""The golden set: its model, how it is read from YAML and validated, and written back.

See docs/design.md, "The golden set on disk".
"""
