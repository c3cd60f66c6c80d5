const response = { data: { results: undefined } };
console.log(response.data.results.map((r) => r.id));
