"""The golden set: its model, how it is read from YAML and validated, and written back.

See DESIGN §4.
"""
