import os

os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers loading bars, as the engine sets
os.environ.setdefault("HF_HUB_OFFLINE", "1")
