# What an operator's schema says about a call (docs/capture.md): the arguments it
# writes (also those the schema does not mark), whether it may draw random
# numbers, and the random number generators' state to tell whether it did.

SCHEMA_FACTS = {}  # func -> ((index, name) of written arguments, draws random numbers,
                  # name, UNMARKED_WRITES' entry or None)

# operators that write arguments their schema does not mark as written (Tensor(a!)):
# the batch norms update running_mean and running_var (their arguments 3 and 4) when
# their argument 5, training, is true, without bumping the tensors' version counters
# (torch 1.13 to 2.14): (index and name of the flag, the arguments written)
UNMARKED_WRITES = dict((op, (5, "training", ((3, "running_mean"), (4, "running_var"))))
                       for op in ("native_batch_norm", "cudnn_batch_norm", "miopen_batch_norm"))

# operators that draw random numbers, also those without a Generator argument in their
# schema in some torch (rand_like, dropout); any other op with one is checked too
RNG_OPS = frozenset((
    "native_dropout", "dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout",
    "rrelu", "rrelu_with_noise", "rand", "rand_like", "randn", "randn_like", "randint",
    "randint_like", "randperm", "normal", "normal_", "bernoulli", "bernoulli_", "multinomial",
    "uniform_", "exponential_", "cauchy_", "geometric_", "log_normal_", "random_", "poisson",
    "binomial", "_standard_gamma", "_sample_dirichlet"))


def schema_facts(func):
    """(written arguments as (index, name), may draw random numbers, name, the
    arguments it writes when a flag is set: UNMARKED_WRITES' entry, less those the
    schema marks, or None) of an op."""
    f = SCHEMA_FACTS.get(func)
    if f is None:
        name = str(func)
        packet = name.split(".")[1] if "." in name else ""
        writes, rng = [], packet in RNG_OPS
        try:
            for i, a in enumerate(func._schema.arguments):
                if a.alias_info is not None and a.alias_info.is_write:
                    writes.append((i, a.name))
                if "Generator" in str(a.type):
                    rng = True
        except AttributeError:
            rng = True  # unknown: check
        unmarked = UNMARKED_WRITES.get(packet) if name.startswith("aten.") else None
        if unmarked:
            more = tuple(w for w in unmarked[2] if w[0] not in [i for i, _ in writes])
            unmarked = (unmarked[0], unmarked[1], more) if more else None
        f = SCHEMA_FACTS[func] = (tuple(writes), rng, name, unmarked)
    return f


def op_writes(facts, args, kwargs):
    """The arguments (index, name) this call of the op writes: those its schema marks,
    and its UNMARKED_WRITES where the flag is true in this call."""
    writes, unmarked = facts[0], facts[3]
    if unmarked:
        i, flag, more = unmarked
        if (args[i] if i < len(args) else kwargs.get(flag)) is True:
            return writes + more
    return writes


def mutated_args(writes, args, kwargs):
    """(name, tensor) of the arguments the op writes (Tensor(a!) in its schema)."""
    out = []
    for i, name in writes:
        v = args[i] if i < len(args) else kwargs.get(name)
        if v is not None and hasattr(v, "_version"):
            out.append((name, v))
    return out


def rng_state(torch, cuda):
    """What tells whether an op drew random numbers: the CPU generator's state, and
    the CUDA generator's offset where this torch has it (get_rng_state copies)."""
    s = [torch.default_generator.get_state()]
    if cuda:
        g = torch.cuda.default_generators[torch.cuda.current_device()]
        off = getattr(g, "get_offset", None)
        s.append(off() if off else torch.cuda.get_rng_state())
    return s


def same_rng(torch, a, b):
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor):
            if not torch.equal(x, y):
                return False
        elif x != y:
            return False
    return True
