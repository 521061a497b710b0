#!/usr/bin/env python3
"""Time CleanRL's PPO update in PyTorch on CPU, for comparison with Drover.

Usage: /usr/bin/python3 scripts/bench_ppo_torch.py [--threads 1,2] [--runs 30] [--warmup 5]

One update is what agents/ppo's BenchmarkUpdate times (and CleanRL's
ppo.py's optimisation loop does): a rollout of 4 envs x 128 steps = 512
samples, 4 epochs of 4 shuffled minibatches of 128, separate 64-64 tanh
actor and critic (orthogonal init), per-minibatch advantage normalisation,
clipped surrogate (0.2), clipped value loss, entropy bonus 0.01, value
coefficient 0.5, global grad-norm clipping at 0.5 and Adam (lr 2.5e-4, eps
1e-5), with CleanRL's .item() calls for approx_kl and clipfrac. The shapes
are CartPole-v1 (obs 4, 2 actions) and the placement env on 16 and 64 nodes
(obs 21 / 45, 3 / 9 actions, with MaskablePPO's action masks:
logits of invalid actions set to -1e8, masked entropy terms).

For each thread count (torch.set_num_threads) and shape it runs --warmup
updates, then --runs timed ones, and prints one line per shape:

    torch threads=1 env=cartpole obs=4 actions=2 median_ms=3.210 min_ms=3.100 median_cpu_ms=3.200

(wall-clock median and minimum, and the median process CPU time, all threads
together, per update).

Needs numpy and torch (Debian: apt-get install python3-torch).
"""
import argparse
import time

import numpy as np
import torch
from torch import nn
from torch.distributions.categorical import Categorical

SHAPES = [("cartpole", 4, 2, False), ("placement-16x4", 21, 3, True), ("placement-64x4", 45, 9, True)]
NUM_ENVS, NUM_STEPS, NUM_MINIBATCHES, UPDATE_EPOCHS = 4, 128, 4, 4
CLIP, ENT_COEF, VF_COEF, MAX_GRAD_NORM, LR = 0.2, 0.01, 0.5, 0.5, 2.5e-4


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """CleanRL ppo.py's Agent: separate actor and critic."""

    def __init__(self, obs, actions):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0))
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, actions), std=0.01))


def dist_of(logits, mask):
    """Categorical over logits; with a mask, MaskablePPO's masking."""
    if mask is not None:
        logits = torch.where(mask, logits, torch.tensor(-1e8))
    return Categorical(logits=logits)


def entropy_of(dist, mask):
    if mask is None:
        return dist.entropy()
    p_log_p = dist.logits * dist.probs
    return -torch.where(mask, p_log_p, torch.tensor(0.0)).sum(-1)


def make_rollout(agent, obs_dim, n_actions, masked, g):
    b = NUM_ENVS * NUM_STEPS
    obs = torch.randn(b, obs_dim, generator=g)
    mask = None
    if masked:
        mask = torch.randint(0, 4, (b, n_actions), generator=g) != 0
        mask[torch.arange(b), torch.randint(0, n_actions, (b,), generator=g)] = True
    with torch.no_grad():
        dist = dist_of(agent.actor(obs), mask)
        actions = dist.sample()
        logprobs = dist.log_prob(actions)
        values = agent.critic(obs).view(-1)
    advantages = torch.randn(b, generator=g)
    returns = torch.randn(b, generator=g)
    return obs, actions, logprobs, values, advantages, returns, mask


def update(agent, optimizer, rollout, rng):
    """One PPO update, as in CleanRL's ppo.py (the optimisation loop)."""
    b_obs, b_actions, b_logprobs, b_values, b_advantages, b_returns, b_mask = rollout
    batch = b_obs.shape[0]
    mb_size = batch // NUM_MINIBATCHES
    b_inds = np.arange(batch)
    clipfracs = []
    for _ in range(UPDATE_EPOCHS):
        rng.shuffle(b_inds)
        for start in range(0, batch, mb_size):
            mb_inds = torch.from_numpy(b_inds[start:start + mb_size])
            mb_mask = None if b_mask is None else b_mask[mb_inds]
            dist = dist_of(agent.actor(b_obs[mb_inds]), mb_mask)
            newlogprob = dist.log_prob(b_actions[mb_inds])
            entropy = entropy_of(dist, mb_mask)
            newvalue = agent.critic(b_obs[mb_inds])
            logratio = newlogprob - b_logprobs[mb_inds]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs += [((ratio - 1.0).abs() > CLIP).float().mean().item()]
            mb_advantages = b_advantages[mb_inds]
            mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
            pg_loss1 = -mb_advantages * ratio
            pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - CLIP, 1 + CLIP)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()
            newvalue = newvalue.view(-1)
            v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
            v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds], -CLIP, CLIP)
            v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
            v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - ENT_COEF * entropy_loss + v_loss * VF_COEF
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), MAX_GRAD_NORM)
            optimizer.step()
    return approx_kl.item(), float(np.mean(clipfracs))


def bench(threads, name, obs_dim, n_actions, masked, runs, warmup):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    g = torch.Generator().manual_seed(2)
    rng = np.random.default_rng(3)
    agent = Agent(obs_dim, n_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=LR, eps=1e-5)
    rollout = make_rollout(agent, obs_dim, n_actions, masked, g)
    for _ in range(warmup):
        update(agent, optimizer, rollout, rng)
    times, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        update(agent, optimizer, rollout, rng)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    times, cpu = np.array(times) * 1e3, np.array(cpu) * 1e3
    print(f"torch threads={threads} env={name} obs={obs_dim} actions={n_actions} "
          f"median_ms={np.median(times):.3f} min_ms={times.min():.3f} median_cpu_ms={np.median(cpu):.3f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--threads", default="1,2", help="comma-separated torch.set_num_threads values")
    ap.add_argument("--runs", type=int, default=30, help="timed updates per shape")
    ap.add_argument("--warmup", type=int, default=5, help="untimed updates first")
    args = ap.parse_args()
    print(f"# torch {torch.__version__}, numpy {np.__version__}, default threads {torch.get_num_threads()}", flush=True)
    for threads in [int(t) for t in args.threads.split(",")]:
        for name, obs_dim, n_actions, masked in SHAPES:
            bench(threads, name, obs_dim, n_actions, masked, args.runs, args.warmup)


if __name__ == "__main__":
    main()
