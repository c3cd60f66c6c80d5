set -euo pipefail
python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGKILL)'
