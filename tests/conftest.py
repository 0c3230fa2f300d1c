import sys
from pathlib import Path

# Let test modules import the helpers in tests/compat as plain modules.
sys.path.insert(0, str(Path(__file__).resolve().parent / "compat"))
