# edgerl's PyTorch training engine: `python -m edgerl_torch` serves docs/torch-engine.md's protocol.
# Importing the package imports nothing heavy (no torch), so the requirements check and `hello` work
# on a machine without torch.
