/**
 * The reactive balancer's state across a spatial run: the meter, the last move, and the events
 * users see. The stage loop calls `afterStep` at every step boundary and performs a move when told
 * (rebalance-move.ts), then calls `moved`. Decisions are balancer.ts's.
 */
import type { NodeJobEvent, StageDevices } from '../common/node-protocol/index.js';
import { BalanceMeter } from './balance-meter.js';
import {
  decideBalance,
  defaultBalancerConfig,
  type BalanceDecision,
  type BalancerConfig,
  type BalancerState,
} from './balancer.js';

const splitOf = (s: StageDevices) => ({ generate: s.generate.length, train: s.train.length });

export class ReactiveBalancer {
  readonly config: BalancerConfig;
  readonly meter: BalanceMeter;
  private state: Omit<BalancerState, 'remainingSteps'> = {
    stepsSinceMove: 0,
    lastMove: null,
    measuredMoveSeconds: null,
  };
  /** After a move, until the step time after it is measured. */
  private pending: { stepSecondsBefore: number } | null = null;

  constructor(config: Partial<BalancerConfig> = {}) {
    this.config = { ...defaultBalancerConfig, ...config };
    this.meter = new BalanceMeter(this.config.windowSteps);
  }

  /** A step completed: the decision for the next one, and the events to report now. */
  afterStep(
    step: number,
    stages: StageDevices,
    remainingSteps: number,
  ): { decision: BalanceDecision; events: NodeJobEvent[] } {
    this.meter.closeStep();
    this.state.stepsSinceMove++;
    const window = this.meter.window(splitOf(stages));
    const decision = decideBalance(window, { ...this.state, remainingSteps }, this.config);
    const events: NodeJobEvent[] = [];
    if (this.pending && window.steps >= this.config.windowSteps) {
      events.push({
        type: 'job.rebalance_measured',
        step,
        split: splitOf(stages),
        stepSecondsBefore: this.pending.stepSecondsBefore,
        stepSecondsAfter: decision.stepSeconds,
        imbalance: decision.imbalance,
      });
      this.pending = null;
    }
    return { decision, events };
  }

  /** A move was taken: the event to report; the window starts again. */
  moved(
    step: number,
    decision: BalanceDecision,
    from: StageDevices,
    to: StageDevices,
    moveSeconds: number,
  ): NodeJobEvent {
    this.state = { stepsSinceMove: 0, lastMove: decision.move, measuredMoveSeconds: moveSeconds };
    this.pending = { stepSecondsBefore: decision.stepSeconds };
    this.meter.reset();
    return {
      type: 'job.rebalanced',
      step,
      from: splitOf(from),
      to: splitOf(to),
      stages: to,
      imbalance: decision.imbalance,
      stepSecondsBefore: decision.stepSeconds,
      predictedStepSeconds: decision.predictedStepSeconds,
      moveSeconds,
    };
  }
}
