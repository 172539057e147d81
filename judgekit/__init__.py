"""judgekit: fast, resumable, cost-bounded judge-heavy evaluations of multimodal models."""
__version__ = "0.1.0"
