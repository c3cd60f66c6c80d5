// The API nests the customer now: order.customer.name, not order.name.
const order = { id: 7, customer: { name: "Ana" } };
console.log(order.buyer.name.toUpperCase());
