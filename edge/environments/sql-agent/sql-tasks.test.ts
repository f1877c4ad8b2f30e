import { describe, expect, it } from 'vitest';
import { sampleSeedSql as seed } from '../../../sandbox/sample-seed.ts';
import { compareResultSets } from './compare-result-sets.ts';
import { sqlTasks, sqlTaskSchema } from './sql-tasks.ts';

// The shipped sample data, read straight from the sandbox's seed SQL and parsed here, so that some
// known answers are re-derived in plain TypeScript, independently of any database.

/** The value tuples of `INSERT INTO sample.<table>`, one per line, as strings and numbers. */
function rowsOf(table: string): (string | number)[][] {
  const start = seed.indexOf(`INSERT INTO sample.${table} `);
  if (start === -1) throw new Error(`no INSERT for sample.${table} in the seed`);
  const end = seed.indexOf(';\n', start);
  return seed
    .slice(start, end)
    .split('\n')
    .filter((line) => line.trim().startsWith('('))
    .map((line) => {
      const inner = line.trim().replace(/^\(/, '').replace(/\),?$/, '');
      return [...inner.matchAll(/'((?:[^']|'')*)'|([-0-9.]+)/g)].map((match) =>
        match[1] !== undefined ? match[1].replaceAll("''", "'") : Number(match[2]),
      );
    });
}

const customers = rowsOf('customers').map(([id, name, , city, country, signedUpOn]) => ({
  id,
  name,
  city,
  country,
  signedUpOn,
}));
const products = rowsOf('products').map(([id, name, category, price]) => ({
  id,
  name,
  category,
  price: Number(price),
}));
const orders = rowsOf('orders').map(([id, customerId, orderedOn, status]) => ({
  id,
  customerId,
  orderedOn,
  status,
}));
const items = rowsOf('order_items').map(([orderId, productId, quantity, unitPrice]) => ({
  orderId,
  productId,
  quantity: Number(quantity),
  unitPrice: Number(unitPrice),
}));

function expectedOf(id: string) {
  const task = sqlTasks.find((candidate) => candidate.id === id);
  if (!task) throw new Error(`no task ${id}`);
  return task;
}

function countBy<T>(values: T[]): [T, number][] {
  const counts = new Map<T, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts];
}

function expectSameResult(id: string, derived: unknown[][]) {
  const task = expectedOf(id);
  expect(compareResultSets(task.expected, derived, { ordered: task.ordered }), id).toEqual({ equal: true });
}

describe('sql-agent tasks', () => {
  it('are well formed, uniquely named, and both splits hold some', () => {
    for (const task of sqlTasks) {
      expect(sqlTaskSchema.safeParse(task).success, task.id).toBe(true);
      const widths = new Set(task.expected.map((row) => row.length));
      expect(widths.size, task.id).toBeLessThanOrEqual(1);
    }
    expect(new Set(sqlTasks.map((task) => task.id)).size).toBe(sqlTasks.length);
    expect(sqlTasks.some((task) => task.split === 'eval')).toBe(true);
    expect(sqlTasks.some((task) => task.split === 'train')).toBe(true);
  });

  it('match answers re-derived from the migration’s rows', () => {
    expect(customers).toHaveLength(24);
    expectSameResult(
      'customers-in-paris',
      customers.filter((c) => c.city === 'Paris').map((c) => [c.name]),
    );
    expectSameResult('customers-per-country', countBy(customers.map((c) => c.country)));
    expectSameResult('orders-per-status', countBy(orders.map((o) => o.status)));
    const maxPrice = Math.max(...products.map((p) => p.price));
    expectSameResult(
      'most-expensive-product',
      products.filter((p) => p.price === maxPrice).map((p) => [p.name, p.price]),
    );
    const ordering = new Set(orders.map((o) => o.customerId));
    expectSameResult(
      'customers-without-orders',
      customers.filter((c) => !ordering.has(c.id)).map((c) => [c.name]),
    );
    // Sum in cents to keep the arithmetic exact.
    const pending = new Set(orders.filter((o) => o.status === 'pending').map((o) => o.id));
    const pendingCents = items
      .filter((item) => pending.has(item.orderId))
      .reduce((sum, item) => sum + item.quantity * Math.round(item.unitPrice * 100), 0);
    expectSameResult('pending-orders-value', [[pendingCents / 100]]);
    const portugal = new Set(customers.filter((c) => c.country === 'Portugal').map((c) => c.id));
    const footwear = new Set(products.filter((p) => p.category === 'footwear').map((p) => p.id));
    const portugalOrders = new Set(orders.filter((o) => portugal.has(o.customerId)).map((o) => o.id));
    const withFootwear = new Set(
      items
        .filter((item) => portugalOrders.has(item.orderId) && footwear.has(item.productId))
        .map((item) => item.orderId),
    );
    expectSameResult('portugal-footwear-orders', [[withFootwear.size]]);
    const cancelled = orders.filter((o) => o.status === 'cancelled').length;
    expectSameResult('cancelled-order-share', [[Math.round((1000 * cancelled) / orders.length) / 10]]);
    expectSameResult('customers-signed-up-in-2024', [
      [customers.filter((c) => String(c.signedUpOn) >= '2024').length],
    ]);
  });
});
