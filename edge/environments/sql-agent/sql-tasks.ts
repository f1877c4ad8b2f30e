// The SQL agent's tasks: questions about the sample shop (db/migrations/0002_sample_database.sql)
// with the reference query and its known result. The rows there are fixed, so the answers are too;
// edge/environments/sql-agent/sql-tasks.test.ts re-derives a few by hand from the inserted rows.
import { z } from 'zod';
import { taskSplits } from '../../../protocol/statuses.ts';

const cell = z.union([z.string(), z.number(), z.null()]);

export const sqlTaskSchema = z.object({
  id: z.string().min(1),
  split: z.enum(taskSplits),
  prompt: z.string().min(1),
  /** Whether the question asks for an order (then row order counts). */
  ordered: z.boolean(),
  /** A query that answers the question, run against the sample schema. */
  referenceSql: z.string().min(1),
  /** The reference query's result on the shipped data: numbers as JSON numbers, dates as YYYY-MM-DD. */
  expected: z.array(z.array(cell)),
});
export type SqlTask = z.infer<typeof sqlTaskSchema>;

// The split is chosen by hand rather than hashed: with 18 questions a hash leaves eval lopsided, and
// here each eval question exercises a different skill (ORDER BY/LIMIT, date grouping, anti-join,
// multi-way join, filtered aggregate) that train questions also teach.
export const sqlTasks: readonly SqlTask[] = [
  {
    id: 'customers-in-paris',
    split: 'train',
    prompt: 'List the names of the customers who live in Paris.',
    ordered: false,
    referenceSql: "SELECT name FROM customers WHERE city = 'Paris'",
    expected: [['Ada Lovelace'], ['Dev Patel'], ['Elena Rossi'], ['Kemi Adeyemi'], ['Umar Aziz']],
  },
  {
    id: 'customers-per-country',
    split: 'train',
    prompt: 'How many customers are there in each country? Return the country and the count.',
    ordered: false,
    referenceSql: 'SELECT country, count(*) FROM customers GROUP BY country',
    expected: [
      ['Canada', 1],
      ['France', 6],
      ['Germany', 3],
      ['Japan', 5],
      ['Portugal', 4],
      ['USA', 5],
    ],
  },
  {
    id: 'most-expensive-product',
    split: 'eval',
    prompt: 'Which product has the highest price? Return its name and price.',
    ordered: false,
    referenceSql: 'SELECT name, price FROM products ORDER BY price DESC LIMIT 1',
    expected: [['Hiking Boots', 159.99]],
  },
  {
    id: 'average-price-per-category',
    split: 'train',
    prompt: 'For each product category, return the category and its average price rounded to 2 decimals.',
    ordered: false,
    referenceSql: 'SELECT category, round(avg(price), 2) FROM products GROUP BY category',
    expected: [
      ['apparel', 71.98],
      ['footwear', 94.12],
      ['gear', 56.36],
      ['nutrition', 19.81],
    ],
  },
  {
    id: 'customers-without-orders',
    split: 'eval',
    prompt: 'Which customers have never placed an order? Return their names.',
    ordered: false,
    referenceSql:
      'SELECT name FROM customers c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)',
    expected: [['Kemi Adeyemi'], ['Vera Novak'], ['Wen Li'], ['Yusuf Demir']],
  },
  {
    id: 'orders-per-status',
    split: 'train',
    prompt: 'How many orders are there in each status? Return the status and the count.',
    ordered: false,
    referenceSql: 'SELECT status, count(*) FROM orders GROUP BY status',
    expected: [
      ['cancelled', 7],
      ['delivered', 23],
      ['pending', 6],
      ['shipped', 12],
    ],
  },
  {
    id: 'top-three-customers-by-spend',
    split: 'train',
    prompt:
      'Which three customers spent the most on orders that were not cancelled (spend = quantity × unit_price)? ' +
      'Return name and total spent, highest first.',
    ordered: true,
    referenceSql:
      'SELECT c.name, sum(oi.quantity * oi.unit_price) AS total FROM customers c ' +
      'JOIN orders o ON o.customer_id = c.id JOIN order_items oi ON oi.order_id = o.id ' +
      "WHERE o.status <> 'cancelled' GROUP BY c.id, c.name ORDER BY total DESC LIMIT 3",
    expected: [
      ['Luca Bianchi', 946.95],
      ['Ben Okafor', 898.58],
      ['Umar Aziz', 836.65],
    ],
  },
  {
    id: 'delivered-revenue-by-month',
    split: 'eval',
    prompt:
      'What was the revenue (quantity × unit_price) of delivered orders in each month? ' +
      'Return the month as YYYY-MM and the revenue, in month order.',
    ordered: true,
    referenceSql:
      "SELECT to_char(o.ordered_on, 'YYYY-MM') AS month, sum(oi.quantity * oi.unit_price) FROM orders o " +
      "JOIN order_items oi ON oi.order_id = o.id WHERE o.status = 'delivered' GROUP BY month ORDER BY month",
    expected: [
      ['2024-01', 398.5],
      ['2024-02', 139.8],
      ['2024-03', 211],
      ['2024-04', 357.4],
      ['2024-05', 477.5],
      ['2024-06', 788],
      ['2024-07', 629.25],
      ['2024-08', 1023.9],
      ['2024-09', 769.78],
      ['2024-10', 22.5],
    ],
  },
  {
    id: 'best-selling-product',
    split: 'train',
    prompt:
      'Which product sold the most units in orders that were not cancelled? Return its name and the units.',
    ordered: false,
    referenceSql:
      'SELECT p.name, sum(oi.quantity) AS units FROM products p JOIN order_items oi ON oi.product_id = p.id ' +
      "JOIN orders o ON o.id = oi.order_id WHERE o.status <> 'cancelled' GROUP BY p.id, p.name " +
      'ORDER BY units DESC LIMIT 1',
    expected: [['Electrolyte Mix', 22]],
  },
  {
    id: 'customers-with-many-orders',
    split: 'train',
    prompt: 'Which customers placed more than three orders? Return the name and the number of orders.',
    ordered: false,
    referenceSql:
      'SELECT c.name, count(*) FROM customers c JOIN orders o ON o.customer_id = c.id ' +
      'GROUP BY c.id, c.name HAVING count(*) > 3',
    expected: [
      ['Ada Lovelace', 5],
      ['Hiro Tanaka', 4],
      ['Luca Bianchi', 5],
      ['Olga Ivanova', 4],
    ],
  },
  {
    id: 'portugal-footwear-orders',
    split: 'eval',
    prompt: 'How many orders from customers in Portugal contain at least one footwear product?',
    ordered: false,
    referenceSql:
      'SELECT count(DISTINCT o.id) FROM orders o JOIN customers c ON c.id = o.customer_id ' +
      'JOIN order_items oi ON oi.order_id = o.id JOIN products p ON p.id = oi.product_id ' +
      "WHERE c.country = 'Portugal' AND p.category = 'footwear'",
    expected: [[6]],
  },
  {
    id: 'average-delivered-order-value',
    split: 'train',
    prompt:
      'What is the average value of a delivered order (the sum of quantity × unit_price over its items), ' +
      'rounded to 2 decimals?',
    ordered: false,
    referenceSql:
      'SELECT round(avg(total), 2) FROM (SELECT sum(oi.quantity * oi.unit_price) AS total FROM orders o ' +
      "JOIN order_items oi ON oi.order_id = o.id WHERE o.status = 'delivered' GROUP BY o.id) AS per_order",
    expected: [[209.46]],
  },
  {
    id: 'first-order-per-customer',
    split: 'train',
    prompt:
      'For each customer who has ordered, return the name and the date of their first order, ' +
      'sorted by that date (then by name).',
    ordered: true,
    referenceSql:
      'SELECT c.name, min(o.ordered_on) AS first FROM customers c JOIN orders o ON o.customer_id = c.id ' +
      'GROUP BY c.id, c.name ORDER BY first, c.name',
    expected: [
      ['Hiro Tanaka', '2024-01-04'],
      ['Ada Lovelace', '2024-01-12'],
      ['Ben Okafor', '2024-01-18'],
      ['Luca Bianchi', '2024-01-23'],
      ['Farid Haddad', '2024-02-02'],
      ['Nils Larsen', '2024-02-12'],
      ['Maya Cohen', '2024-02-21'],
      ['Elena Rossi', '2024-03-01'],
      ['Rosa Garcia', '2024-03-03'],
      ['Tara Kaur', '2024-03-21'],
      ['Dev Patel', '2024-03-28'],
      ['Chloe Martin', '2024-04-05'],
      ['Grace Hopper', '2024-04-09'],
      ['Jonas Berg', '2024-04-27'],
      ['Olga Ivanova', '2024-05-09'],
      ['Quinn Walsh', '2024-05-17'],
      ['Sami Nieminen', '2024-05-28'],
      ['Priya Sharma', '2024-08-24'],
      ['Umar Aziz', '2024-08-30'],
      ['Ines Silva', '2024-10-14'],
    ],
  },
  {
    id: 'city-with-most-customers',
    split: 'train',
    prompt: 'Which city has the most customers? Return the city and the count.',
    ordered: false,
    referenceSql: 'SELECT city, count(*) FROM customers GROUP BY city ORDER BY count(*) DESC LIMIT 1',
    expected: [['Paris', 5]],
  },
  {
    id: 'pending-orders-value',
    split: 'train',
    prompt: 'What is the total value (quantity × unit_price) of all pending orders?',
    ordered: false,
    referenceSql:
      'SELECT sum(oi.quantity * oi.unit_price) FROM orders o JOIN order_items oi ON oi.order_id = o.id ' +
      "WHERE o.status = 'pending'",
    expected: [[1318.95]],
  },
  {
    id: 'revenue-per-category',
    split: 'train',
    prompt:
      'What is the revenue (quantity × unit_price) of each product category over orders that were not ' +
      'cancelled? Return category and revenue, highest first.',
    ordered: true,
    referenceSql:
      'SELECT p.category, sum(oi.quantity * oi.unit_price) AS revenue FROM products p ' +
      'JOIN order_items oi ON oi.product_id = p.id JOIN orders o ON o.id = oi.order_id ' +
      "WHERE o.status <> 'cancelled' GROUP BY p.category ORDER BY revenue DESC",
    expected: [
      ['apparel', 2999],
      ['gear', 2181.95],
      ['footwear', 1670.97],
      ['nutrition', 898.5],
    ],
  },
  {
    id: 'customers-signed-up-in-2024',
    split: 'train',
    prompt: 'How many customers signed up in 2024?',
    ordered: false,
    referenceSql:
      "SELECT count(*) FROM customers WHERE signed_up_on >= '2024-01-01' AND signed_up_on < '2025-01-01'",
    expected: [[5]],
  },
  {
    id: 'cancelled-order-share',
    split: 'eval',
    prompt: 'What percentage of all orders were cancelled, rounded to 1 decimal?',
    ordered: false,
    referenceSql:
      "SELECT round(100.0 * count(*) FILTER (WHERE status = 'cancelled') / count(*), 1) FROM orders",
    expected: [[14.6]],
  },
];
