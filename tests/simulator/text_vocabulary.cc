#include "tests/simulator/text_vocabulary.h"

namespace issuescope::sim::vocab {

const Table kComponents = {
    "CUDA", "autograd", "DataLoader", "torch.compile", "FSDP", "ZeRO-3", "KV cache",
    "PagedAttention", "LoRA", "quantization", "NCCL", "tensor parallel", "MoE",
    "pipeline parallel", "FlashAttention", "mixed precision", "checkpointing", "optimizer",
    "tokenizer", "speculative decoding", "continuous batching", "activation checkpointing",
    "sequence parallel", "expert parallel", "Triton kernels", "cuBLAS", "distributed sampler",
    "gradient accumulation", "AMP", "XLA", "graph mode", "dynamic shapes", "ONNX export",
    "TorchScript", "DDP", "all_to_all", "RoPE scaling", "beam search", "fused Adam",
    "rotary embedding", "int8 inference", "FP8 training", "GPTQ", "AWQ", "prefix caching"};

const Table kSymptoms = {
    "segfault", "CUDA OOM", "NaN loss", "hang in all_reduce", "slow throughput", "wrong output",
    "illegal memory access", "deadlock", "memory leak", "RuntimeError", "shape mismatch",
    "accuracy drop", "loss spike", "NCCL timeout", "process killed", "silent data corruption",
    "recompilation storm", "assertion failure", "gradient explosion", "high latency",
    "core dump", "incorrect gradients", "crash on exit", "checkpoint load failure"};

const Table kContexts = {
    "training with 8 GPUs", "resuming from a checkpoint", "using bf16",
    "running inference with batch size 64", "enabling gradient checkpointing",
    "sharding across 2 nodes", "fine-tuning {model}", "serving {model}",
    "the first iteration", "long sequences (32k tokens)", "evaluation mode",
    "multi-node training", "loading a sharded state dict", "exporting the model",
    "running under torchrun", "mixing fp16 and fp32 parameters", "calling backward twice"};

const Table kHardware = {"A100-SXM4-80GB", "H100 80GB HBM3", "V100-SXM2-32GB", "RTX 4090",
                         "RTX 3090", "L40S", "A10G", "T4", "MI250X", "H800", "A800 80GB"};

const Table kFeatures = {"FP8 kv cache", "chunked prefill", "sliding window attention",
                         "grouped query attention", "ZeRO++", "async checkpoint saving",
                         "custom all-reduce", "LoRA adapters hot swap", "multi-LoRA batching",
                         "CPU offload", "NVMe offload", "structured output",
                         "context parallel", "elastic training", "bucketized sampler"};

const Table kModels = {"Llama-2-7b", "Llama-3-70B", "Mistral-7B", "Mixtral-8x7B", "Qwen2-72B",
                       "GPT-NeoX-20B", "Falcon-40B", "BLOOM-176B", "ChatGLM3-6B", "T5-11B",
                       "BERT-large", "ViT-H/14", "Baichuan2-13B", "DeepSeek-V2", "Phi-3-mini"};

const Table kComponentsCn = {"昇腾NPU", "自动微分", "数据加载", "图模式", "分布式并行", "混合精度",
                             "算子融合", "动态形状", "模型量化", "流水线并行", "优化器",
                             "静态图编译"};

const Table kSymptomsCn = {"内存溢出", "精度下降", "进程卡死", "损失变成NaN", "性能下降",
                           "段错误", "结果错误", "通信超时", "编译失败", "显存泄漏"};

const Table kContextsCn = {"训练大模型时", "多机多卡训练时", "加载检查点时", "推理阶段",
                           "开启混合精度后", "使用数据并行时", "切换到图模式后"};

const Table kHardwareCn = {"昇腾910B", "昇腾910A", "Atlas 800", "A100服务器", "鲲鹏920"};

const Table kTitles = {
    "[Bug] {component}: {symptom} when {context}",
    "{symptom} with {component} on {hardware}",
    "{component} {symptom} after upgrading to {version}",
    "{symptom} in {component} while {context}",
    "[{component}] {symptom} with {model}",
    "Unexpected {symptom} using {component} and {component}",
    "[Feature] Support {feature} in {component}",
    "Question: how to avoid {symptom} with {component}?",
    "{model}: {symptom} when {context}",
    "Regression: {component} {symptom} on {hardware}"};

const Table kTitlesCn = {"在{hardware_cn}上{context_cn}出现{symptom_cn}",
                         "{component_cn}{context_cn}{symptom_cn}",
                         "[Bug] {component_cn}在{hardware_cn}上{symptom_cn}",
                         "{context_cn}{component_cn}报错：{symptom_cn}",
                         "在昇腾910B上训练大模型时出现内存溢出"};

const Table kPrTitles = {"[{component}] Fix {symptom} when {context}",
                         "Add {feature} support for {component}",
                         "Speed up {component} on {hardware}",
                         "[misc] Refactor {component} and {component}",
                         "Fix {symptom} in {component} for {model}",
                         "[CI] Add regression test for {component} {symptom}"};

const Table kPrTitlesCn = {"修复{component_cn}{symptom_cn}问题", "为{component_cn}增加{hardware_cn}支持",
                           "优化{component_cn}在{hardware_cn}上的性能"};

const Table kPrBullets = {"guard {component} against empty inputs",
                          "move the {component} buffer to the current stream",
                          "add a unit test reproducing the {symptom}",
                          "document the new {feature} flag",
                          "fall back to the eager path when {context}",
                          "avoid an extra synchronisation in {component}",
                          "bump the minimum version to {version}"};

const Table kSentences = {
    "I am seeing {symptom} in {component} when {context}.",
    "The problem only shows up on {hardware}; the same script works on a single GPU.",
    "With {version} everything was fine, so this looks like a regression.",
    "Disabling {component} makes the {symptom} go away, but throughput drops by about 30%.",
    "Here is a minimal script that reproduces it with {model}.",
    "The job runs for a few hundred steps and then hits {symptom}.",
    "Setting CUDA_LAUNCH_BLOCKING=1 gives the stack trace below.",
    "I checked the memory profile and the allocator keeps growing on every step.",
    "We use {component} together with {component} in our training stack.",
    "Expected behavior: the loss should decrease as with the reference implementation.",
    "This blocks our migration to {version}, any pointers would be appreciated.",
    "NCCL_DEBUG=INFO shows that rank 3 never joins the collective.",
    "The numbers differ from the eager mode results by more than 1e-2.",
    "It reproduces on {hardware} as well as on {hardware}.",
    "I tried lowering the batch size and the learning rate without success."};

const Table kSentencesCn = {"我们在{hardware_cn}上{context_cn}遇到了{symptom_cn}。",
                            "同样的脚本在GPU上运行正常。", "关闭{component_cn}之后问题消失，但是性能下降明显。",
                            "请问这是已知问题吗？", "下面是最小复现代码和完整日志。",
                            "升级到新版本之后开始出现这个问题。", "训练几百步之后损失突然变成NaN。"};

const Table kComments = {
    "Thanks for the report! Could you share the full output of the environment script?",
    "I can reproduce this on {hardware} with {version}.",
    "Same here, also seeing {symptom} with {component}.",
    "This should be fixed on main, can you try the nightly build?",
    "cc @maintainers for {component}.",
    "Could you try setting the environment variable and rerun?",
    "Looks like a duplicate of an older issue about {component}.",
    "Closing as the fix has been merged. Feel free to reopen if it persists.",
    "We hit the same {symptom} when {context}.",
    "A workaround is to disable {component} for now.",
    "Any update on this? It still happens with {version}."};

const Table kCommentsCn = {"感谢反馈，我们会尽快定位。", "我这边也遇到了同样的{symptom_cn}。",
                           "请提供完整的日志和版本信息。", "该问题已在最新版本修复，请升级后重试。",
                           "可以先关闭{component_cn}规避。"};

const Table kFillers = {"The rest of the setup is unchanged.", "Logs are attached below.",
                        "Nothing else looks unusual.", "The config file is the default one.",
                        "We run the same job every night.", "See the details that follow."};

const Table kCodeLines = {
    "import torch",
    "model = AutoModelForCausalLM.from_pretrained(\"meta-llama/Llama-2-7b-hf\")",
    "x = torch.randn(8, 4096, device=\"cuda\", dtype=torch.bfloat16)",
    "loss = criterion(model(x), y)",
    "loss.backward()",
    "optimizer.step()",
    "torch.distributed.init_process_group(backend=\"nccl\")",
    "model = torch.compile(model, mode=\"max-autotune\")",
    "engine, optimizer, _, _ = deepspeed.initialize(model=model, config=ds_config)",
    "llm = LLM(model=\"mistralai/Mistral-7B-v0.1\", tensor_parallel_size=2)",
    "outputs = llm.generate(prompts, sampling_params)",
    "with torch.autocast(\"cuda\", dtype=torch.float16):",
    "    out = attn(q, k, v, is_causal=True)",
    "dataloader = DataLoader(dataset, batch_size=32, num_workers=8, pin_memory=True)",
    "for step, batch in enumerate(dataloader):",
    "state_dict = torch.load(\"checkpoint.pt\", map_location=\"cpu\")",
    "dist.all_reduce(tensor, op=dist.ReduceOp.SUM)",
    "import mindspore as ms",
    "ms.set_context(mode=ms.GRAPH_MODE, device_target=\"Ascend\")",
    "tf.distribute.MirroredStrategy()"};

const Table kFrames = {"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py",
                       "/opt/conda/lib/python3.10/site-packages/torch/autograd/__init__.py",
                       "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/engine.py",
                       "/usr/local/lib/python3.10/dist-packages/vllm/worker/model_runner.py",
                       "/workspace/Megatron-LM/megatron/core/tensor_parallel/layers.py",
                       "/usr/lib/python3/dist-packages/tensorflow/python/eager/execute.py",
                       "/home/user/train.py", "/workspace/colossalai/booster/plugin.py",
                       "/opt/conda/lib/python3.10/site-packages/transformers/trainer.py"};

const Table kFunctions = {"_call_impl", "forward", "backward", "step", "_run_ddp_forward",
                          "execute_model", "all_reduce", "_wrapped_call_impl", "train",
                          "quick_execute", "_allgather_params", "load_state_dict"};

const Table kErrors = {
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "RuntimeError: NCCL communicator was aborted on rank 3",
    "RuntimeError: Expected all tensors to be on the same device",
    "ValueError: Attention mask should be of size (1, 1, 2048, 2048)",
    "AssertionError: shapes do not match",
    "Segmentation fault (core dumped)",
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor",
    "torch._dynamo.exc.Unsupported: call_function UserDefinedObjectVariable"};

const Table kOperatingSystems = {"Ubuntu 22.04.3 LTS (x86_64)", "Ubuntu 20.04.6 LTS (x86_64)",
                                 "CentOS Linux 7 (Core)", "EulerOS 2.0 (aarch64)",
                                 "Rocky Linux 8.9 (x86_64)"};

std::vector<const Table*> AllTables() {
  return {&kComponents,   &kSymptoms,    &kContexts,    &kHardware,   &kFeatures,
          &kModels,       &kComponentsCn, &kSymptomsCn, &kContextsCn, &kHardwareCn,
          &kTitles,       &kTitlesCn,    &kPrTitles,    &kPrTitlesCn, &kPrBullets,
          &kSentences,    &kSentencesCn, &kComments,    &kCommentsCn, &kFillers,
          &kCodeLines,    &kFrames,      &kFunctions,   &kErrors,     &kOperatingSystems};
}

}  // namespace issuescope::sim::vocab
