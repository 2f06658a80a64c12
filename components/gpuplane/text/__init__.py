"""YAML and JSON text for outputs, chart values and the plan, byte-identical to the standard encoders."""
