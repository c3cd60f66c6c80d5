set -euo pipefail
echo '{"items": null}' > feed.json
node -e 'const f = require("./feed.json"); console.log(f.items.length)'
