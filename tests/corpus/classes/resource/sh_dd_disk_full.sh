set -euo pipefail
dd if=/dev/zero of=/dev/full bs=4096 count=10
