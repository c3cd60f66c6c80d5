set -euo pipefail
python3 -c 'import pandas_healer_corpus as pd; print(pd.__version__)'
