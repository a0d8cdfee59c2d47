import { describeEval } from 'vitest-evals';
import {
  createVerificationEvalHarness,
  createVerificationEvalJudge,
  discoverVerificationEvalScenarios,
} from './verify.js';
import { formatEvalTestName } from './names.js';
import { DEFAULT_EVAL_RUNTIME, getEvalRuntimeApiKey } from './auth.js';

// The shape of Warden's packages/evals/src/verify.eval.ts: assay reads the declaration.
const evals = discoverVerificationEvalScenarios({
  category: 'verification',
  skill: 'skills/security-review/SKILL.md',
  runtime: DEFAULT_EVAL_RUNTIME,
});

describeEval(
  'verification',
  {
    harness: createVerificationEvalHarness({ apiKey: getEvalRuntimeApiKey(), verbose: true }),
    judges: [createVerificationEvalJudge()],
    judgeThreshold: 1,
  },
  (it) => {
    for (const meta of evals) {
      it(formatEvalTestName(meta), { timeout: 120_000 }, async ({ run }) => {
        await run(meta);
      });
    }
  },
);
