// Promote and rollback: a confirmation page (GET) that says what will change, then the change (POST,
// behind guardAction: same origin and the session's CSRF token), through the Store functions the CLI
// uses, under its rules (the fleet's readiness included). A refusal re-renders the confirmation
// with the store's reason.
import type { Context } from 'hono';
import { Hono } from 'hono';
import { guardAction } from '../auth/console-auth.ts';
import type { ConsoleEnv } from '../console-env.ts';
import { errorOutcome } from '../console-error.ts';
import { planPromote, planRollback, promote, rollback } from '../data/default-actions.ts';
import { html } from '../html.ts';
import type { ConsoleLinks } from '../links.ts';
import { type Confirmation, confirmPage } from '../pages/confirm-page.ts';
import { page, pageContext } from './page-routes.ts';

export interface ActionRouteOptions {
  readonly links: ConsoleLinks;
  readonly signOut: boolean;
  readonly fleet?: readonly string[];
  readonly base: string;
}

export function actionRoutes(options: ActionRouteOptions) {
  const { links } = options;
  const promoteLink = links.promote as NonNullable<ConsoleLinks['promote']>;
  const rollbackLink = links.rollback as NonNullable<ConsoleLinks['rollback']>;

  const promoteConfirmation = async (
    c: Context<ConsoleEnv>,
    experiment: string,
    arm: string,
    error?: string,
  ) => {
    const plan = await planPromote(c.var.store, experiment, arm);
    const ready = plan.replicas.filter((row) => row.state === 'ready').map((row) => row.replica);
    const confirmation: Confirmation = {
      title: `Promote ${plan.arm.adapterName}?`,
      section: 'policies',
      lines: [
        html`<b>${plan.arm.adapterName}</b> (arm ${plan.arm.name} of experiment ${plan.view.experiment.name}) becomes the default version of <b>${plan.policyName}</b>, which is now <b>${plan.current?.adapterName ?? 'none'}</b>: requests that name the policy but no version get it.`,
        html`The experiment stops taking traffic. The change is recorded, so "Roll back" on the policies page (or <code>edgerl ab rollback ${plan.policyName}</code>) restores ${plan.current?.adapterName ?? 'the previous default'}.`,
        plan.replicas.length > 0
          ? html`Ready on ${ready.length} of ${plan.replicas.length} replica(s)${ready.length > 0 ? `: ${ready.join(', ')}` : ''}${options.fleet && options.fleet.length > 0 ? html` (the fleet routed to: ${options.fleet.join(', ')})` : ''}.`
          : html`Not published through a fleet.`,
      ],
      ...(plan.warning ? { warning: plan.warning } : {}),
      ...(error ? { error } : {}),
      action: promoteLink(plan.view.experiment.name, plan.arm.name),
      fields: { arm: plan.arm.name },
      confirmLabel: `Promote ${plan.arm.adapterName}`,
      cancelHref: links.experiment(plan.view.experiment.name),
      possible: plan.arm.versionStatus === 'published',
    };
    return confirmPage(pageContext(c, options), confirmation);
  };

  const rollbackConfirmation = async (c: Context<ConsoleEnv>, policy: string, error?: string) => {
    const plan = await planRollback(c.var.store, policy);
    const confirmation: Confirmation = {
      title: `Roll back ${plan.policyName}?`,
      section: 'policies',
      lines: plan.undo
        ? [
            html`The default version of <b>${plan.policyName}</b> goes back from <b>${plan.current?.adapterName ?? 'none'}</b> to <b>${plan.undo.fromAdapterName ?? 'none'}</b>, undoing the promote of ${plan.undo.toAdapterName}${plan.undo.experimentName ? ` (experiment ${plan.undo.experimentName})` : ''}.`,
            html`Rolling back again steps one more promote back, as <code>edgerl ab rollback ${plan.policyName}</code> does.`,
          ]
        : [html`${plan.policyName} has no promote left to roll back.`],
      ...(error ? { error } : {}),
      action: rollbackLink(plan.policyName),
      fields: {},
      confirmLabel: `Roll back to ${plan.undo?.fromAdapterName ?? 'the previous default'}`,
      cancelHref: links.policies(),
      possible: plan.undo !== undefined,
    };
    return confirmPage(pageContext(c, options), confirmation);
  };

  const policiesAfter = (policy: string, done: 'promoted' | 'rolled-back') =>
    `${links.policies()}?done=${done}&policy=${encodeURIComponent(policy)}`;

  return new Hono<ConsoleEnv>()
    .get('/experiments/:name/promote', async (c) =>
      page(c, await promoteConfirmation(c, c.req.param('name'), c.req.query('arm') ?? '')),
    )
    .post('/experiments/:name/promote', guardAction(), async (c) => {
      const form = await c.req.parseBody();
      const arm = typeof form.arm === 'string' ? form.arm : '';
      try {
        const result = await promote(c.var.store, c.req.param('name'), arm, options.fleet);
        return c.redirect(policiesAfter(result.policyName, 'promoted'), 303);
      } catch (error) {
        const outcome = errorOutcome(error);
        if (outcome.status !== 409) throw error;
        return page(c, await promoteConfirmation(c, c.req.param('name'), arm, outcome.message), 409);
      }
    })
    .get('/policies/:policy/rollback', async (c) =>
      page(c, await rollbackConfirmation(c, c.req.param('policy'))),
    )
    .post('/policies/:policy/rollback', guardAction(), async (c) => {
      try {
        const result = await rollback(c.var.store, c.req.param('policy'), options.fleet);
        return c.redirect(policiesAfter(result.policyName, 'rolled-back'), 303);
      } catch (error) {
        const outcome = errorOutcome(error);
        if (outcome.status !== 409) throw error;
        return page(c, await rollbackConfirmation(c, c.req.param('policy'), outcome.message), 409);
      }
    });
}
