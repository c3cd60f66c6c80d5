// The config lists regions as a string now, not an array.
const config = { regions: "north,south" };
config.regions.forEach((r) => console.log(r));
