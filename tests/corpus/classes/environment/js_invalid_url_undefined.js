const base = process.env.INVENTORY_API_URL;
const url = new URL(`${base}/v1/items?page=1`);
console.log("fetching", url.href);
