"""The bottom layer: records, protocol, errors, configs and time. It imports nothing above it."""
