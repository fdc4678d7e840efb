/* The walker (walk_private.h): the Python names of the operators, each
 * with its aten overloads in the order they are tried (sorted by name,
 * for pyop_find). */
#include "front/walk_private.h"

static const pyop pyops[] = {
    {"abs", {"abs"}, 0},
    {"add", {"add.Tensor", "add.out"}, PY_WRAP},
    {"add_", {"add_.Tensor"}, PY_WRAP},
    {"amax", {"amax"}, 0},
    {"amin", {"amin"}, 0},
    {"arange", {"arange", "arange.start", "arange.start_step"}, PY_FUNC | PY_CREATE},
    {"as_strided", {"as_strided"}, 0},
    {"as_strided_", {"as_strided_"}, 0},
    {"bmm", {"bmm"}, 0},
    {"cat", {"cat"}, PY_FUNC},
    {"clamp", {"clamp", "clamp.Tensor"}, 0},
    {"clamp_", {"clamp_"}, 0},
    {"clone", {"clone"}, 0},
    {"contiguous", {"contiguous"}, 0},
    {"copy_", {"copy_"}, 0},
    {"cos", {"cos"}, 0},
    {"detach", {"detach"}, 0},
    {"detach_", {"detach_"}, 0},
    {"diagonal", {"diagonal"}, 0},
    {"div", {"div.Tensor", "div.out"}, PY_WRAP},
    {"div_", {"div_.Tensor"}, PY_WRAP},
    {"empty", {"empty.memory_format"}, PY_FUNC | PY_VARARGS | PY_CREATE},
    {"empty_like", {"empty_like"}, 0},
    {"eq", {"eq.Tensor", "eq.Scalar"}, 0},
    {"exp", {"exp"}, 0},
    {"expand", {"expand"}, PY_VARARGS},
    {"fill_", {"fill_.Scalar", "fill_.Tensor"}, 0},
    {"flatten", {"flatten.using_ints"}, 0},
    {"full", {"full"}, PY_FUNC | PY_CREATE},
    {"ge", {"ge.Tensor", "ge.Scalar"}, 0},
    {"gt", {"gt.Tensor", "gt.Scalar"}, 0},
    {"le", {"le.Tensor", "le.Scalar"}, 0},
    {"log", {"log"}, 0},
    {"lt", {"lt.Tensor", "lt.Scalar"}, 0},
    {"masked_select", {"masked_select"}, 0},
    {"matmul", {"matmul"}, 0},
    {"mean", {"mean", "mean.dim"}, 0},
    {"mm", {"mm"}, 0},
    {"mul", {"mul.Tensor", "mul.out"}, PY_WRAP},
    {"mul_", {"mul_.Tensor"}, PY_WRAP},
    {"narrow", {"narrow"}, 0},
    {"ne", {"ne.Tensor", "ne.Scalar"}, 0},
    {"neg", {"neg", "neg.out"}, 0},
    {"nonzero", {"nonzero"}, 0},
    {"ones", {"ones"}, PY_FUNC | PY_VARARGS | PY_CREATE},
    {"ones_like", {"ones_like"}, 0},
    {"permute", {"permute"}, PY_VARARGS},
    {"pow", {"pow.Tensor_Tensor", "pow.Tensor_Scalar", "pow.Scalar"}, 0},
    {"reciprocal", {"reciprocal"}, 0},
    {"relu", {"relu"}, 0},
    {"requires_grad_", {"requires_grad_"}, 0},
    {"reshape", {"reshape"}, PY_VARARGS},
    {"rsub", {"rsub.Scalar"}, 0},
    {"select", {"select.int"}, 0},
    {"set_", {"set_.source_Tensor"}, 0},
    {"sigmoid", {"sigmoid"}, 0},
    {"sin", {"sin"}, 0},
    {"sin_", {"sin_"}, 0},
    {"squeeze", {"squeeze", "squeeze.dim"}, 0},
    {"squeeze_", {"squeeze_", "squeeze_.dim"}, 0},
    {"stack", {"stack"}, PY_FUNC},
    {"sub", {"sub.Tensor", "sub.out"}, PY_WRAP},
    {"sub_", {"sub_.Tensor"}, PY_WRAP},
    {"sum", {"sum", "sum.dim_IntList"}, 0},
    {"t", {"t"}, 0},
    {"t_", {"t_"}, 0},
    {"tanh", {"tanh"}, 0},
    {"transpose", {"transpose.int"}, 0},
    {"transpose_", {"transpose_"}, 0},
    {"unbind", {"unbind.int"}, 0},
    {"unsqueeze", {"unsqueeze"}, 0},
    {"unsqueeze_", {"unsqueeze_"}, 0},
    {"view", {"view"}, PY_VARARGS},
    {"where", {"where.self"}, PY_WRAP},
    {"zero_", {"zero_"}, 0},
    {"zeros", {"zeros"}, PY_FUNC | PY_VARARGS | PY_CREATE},
    {"zeros_like", {"zeros_like"}, 0},
};

const pyop *pyop_find(const char *name)
{
    size_t lo = 0, hi = sizeof pyops / sizeof *pyops;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(name, pyops[mid].py);
        if (!c)
            return &pyops[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}


size_t sg__pyop_count(void)
{
    return sizeof pyops / sizeof *pyops;
}

size_t sg__pyop_index(const pyop *p)
{
    return (size_t)(p - pyops);
}
