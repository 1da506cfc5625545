auto s = R"abc(")abc" )abc"; char c = '\''; const wchar_t *w = L"\\";
/* block */ // line \
continued
#include "cute/tensor.hpp"
int x = 0x1'0000'0000 + 1e+3 + .5f + 0b1010u + 07; a >>= b <<= c; p->*m; x...;
