const feed = { data: { items: null } };

function names(feed) {
  try {
    return feed.data.items.map((i) => i.name);
  } catch (err) {
    throw new Error("could not read the product feed", { cause: err });
  }
}

console.log(names(feed));
