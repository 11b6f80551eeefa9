# source: huggingface/trl https://github.com/huggingface/trl/pull/6045 — GFPOTrainer kept the best completions of each group with advanced indexing (`rewards[group_global_indices]`, `prompt_ids[local_input_indices_to_keep]`, ...) and then called `.contiguous()` on every result; integer-tensor indexing already returns a fresh contiguous tensor, so each call was dead work on the GRPO training path. The fix dropped the `.contiguous()` calls.
import torch


class _GRPOTrainer:
    def __init__(self, num_generations):
        self.num_generations = num_generations


class GFPOTrainer(_GRPOTrainer):
    def __init__(self, num_generations, num_remains_in_group, group_filter_func):
        super().__init__(num_generations)
        self.num_remains_in_group = num_remains_in_group
        self.group_filter_func = group_filter_func

    def _group_global_indices(self, rewards, completion_mask):
        group_filter_scores = self.group_filter_func(
            group_lengths=completion_mask.sum(1).view(-1, self.num_generations),
            group_rewards=rewards.view(-1, self.num_generations),
        )
        _, group_local_indices = torch.topk(group_filter_scores, self.num_remains_in_group, dim=-1)
        group_row_offsets = torch.arange(0, rewards.numel(), self.num_generations).unsqueeze(1)
        return (group_row_offsets + group_local_indices).flatten()

    def _filter_groups(self, rewards, rewards_per_func, prompt_ids, completion_ids, completion_mask,
                       old_per_token_logps=None):
        group_global_indices = self._group_global_indices(rewards, completion_mask)
        rewards = rewards[group_global_indices].contiguous()  # want: C
        rewards_per_func = rewards_per_func[group_global_indices, :].contiguous()  # want: C

        local_input_indices_to_keep = group_global_indices
        prompt_ids = prompt_ids[local_input_indices_to_keep].contiguous()  # want: C
        completion_ids = completion_ids[local_input_indices_to_keep].contiguous()  # want: C
        completion_mask = completion_mask[local_input_indices_to_keep].contiguous()  # want: C
        if old_per_token_logps is not None:
            old_per_token_logps = old_per_token_logps[local_input_indices_to_keep].contiguous()  # want: C
        return rewards, rewards_per_func, prompt_ids, completion_ids, completion_mask, old_per_token_logps

    def _filter_groups_fixed(self, rewards, rewards_per_func, prompt_ids, completion_ids, completion_mask,
                             old_per_token_logps=None):
        group_global_indices = self._group_global_indices(rewards, completion_mask)
        rewards = rewards[group_global_indices]
        rewards_per_func = rewards_per_func[group_global_indices, :]

        local_input_indices_to_keep = group_global_indices
        prompt_ids = prompt_ids[local_input_indices_to_keep]
        completion_ids = completion_ids[local_input_indices_to_keep]
        completion_mask = completion_mask[local_input_indices_to_keep]
        if old_per_token_logps is not None:
            old_per_token_logps = old_per_token_logps[local_input_indices_to_keep]
        return rewards, rewards_per_func, prompt_ids, completion_ids, completion_mask, old_per_token_logps


def shortest_completions(group_lengths, group_rewards):
    return -group_lengths.float()


if __name__ == "__main__":
    torch.manual_seed(0)
    G, groups, P, C = 4, 3, 5, 7
    n = G * groups
    rewards = torch.rand(n)
    rewards_per_func = torch.rand(n, 2)
    prompt_ids = torch.randint(0, 100, (n, P))
    completion_ids = torch.randint(0, 100, (n, C))
    completion_mask = (torch.rand(n, C) > 0.3).long()
    old_logps = torch.randn(n, C)

    trainer = GFPOTrainer(G, num_remains_in_group=2, group_filter_func=shortest_completions)
    buggy = trainer._filter_groups(rewards, rewards_per_func, prompt_ids, completion_ids, completion_mask, old_logps)
    fixed = trainer._filter_groups_fixed(rewards, rewards_per_func, prompt_ids, completion_ids, completion_mask,
                                         old_logps)
    for a, b in zip(buggy, fixed):
        assert torch.equal(a, b)
        assert b.is_contiguous()  # advanced indexing already returns a contiguous tensor
        assert b.contiguous() is b  # so the extra call only costs a dispatch per tensor
    print("indexed results are already contiguous; .contiguous() calls were redundant")
