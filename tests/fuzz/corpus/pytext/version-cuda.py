from typing import Optional

__all__ = ["__version__", "debug", "cuda", "git_version", "hip"]
__version__ = '2.9.0+cu130'
debug = False
cuda: Optional[str] = '13.0'
git_version = '97ff6cfd9c86c5c09d7ce775ab64ec5c99230f5d'
hip: Optional[str] = None
xpu: Optional[str] = None
