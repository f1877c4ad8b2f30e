// The sample shop as the model is told about it: one line per table of db/migrations/
// 0002_sample_database.sql, foreign keys as arrows. Short on purpose: it is in every prompt.

export const sampleSchemaDescription = [
  'customers(id, name, email, city, country, signed_up_on date)',
  'products(id, name, category, price numeric)',
  'orders(id, customer_id -> customers, ordered_on date, status: pending|shipped|delivered|cancelled)',
  'order_items(order_id -> orders, product_id -> products, quantity, unit_price numeric)',
].join('\n');
