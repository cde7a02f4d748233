// The fpga_board PL engine's compute core (docs/backends/fpga_board.md,
// "The engine"): one tile of PP output pixels x OCP output channels over
// STEPS reduction steps, bit-identical to src/engine_core.cpp and in the
// cycles src/engine_core.hpp states.
//
//   step s:  acc[p][o] += sum_i (x[s][p][i] - x_zp) * w[s][o][i]     (int32)
//   last:    y[p][o] = clamp(sat32((acc * M[o] + 2^(S[o]-1)) >>> S[o]) + y_zp,
//                            qmin, qmax)                  (one rounding)
//
// Timing, counted in rising edges from the one that samples `start`:
// step s is read from the buffers at edge s+1, multiplied at s+2, summed
// at s+3 and accumulated at s+4, so the accumulators hold the tile's sum
// after edge STEPS+3. A last tile then requantizes pixel p through four
// registers (select, multiply, shift, clamp) and writes it at edge
// STEPS+7+p; `done` rises with the last write, STEPS+PP+6 edges after
// start (STEPS+3 for a tile that only accumulates).
//
// Multipliers: two pixels share each weight, so one multiplier computes
// both products, as AMD's WP486 packs two int8 products into one DSP:
// A = (a1 << 16) + a0 with a0, a1 = x - x_zp in [-255, 255] (25 bits
// signed, the DSP48E1's A port), P = A * w. a0 * w lies in [-32385, 32385],
// so P's low 16 bits, sign-extended, are a0 * w, and the rest, corrected
// by that sign, is a1 * w: PP * ICP * OCP / 2 multipliers.
//
// Buffers are written by the DMA side (xbuf_*, wbuf_*) before `start`;
// the per-lane Bias, M and S and the zero points and clamps are held
// steady from `start` to `done`. Plain Verilog-2005 for Verilator and
// Yosys alike.
module engine_core #(
    parameter PP = 4,
    parameter ICP = 8,
    parameter OCP = 8,
    parameter DEPTH = 512,
    parameter AW = 9        // address bits: 2^AW >= DEPTH
) (
    input wire clk,
    input wire rst,
    // tile buffers, one word per step
    input wire xbuf_we,
    input wire [AW-1:0] xbuf_addr,
    input wire [PP*ICP*8-1:0] xbuf_data,   // pixel p, lane i at bits (p*ICP+i)*8
    input wire wbuf_we,
    input wire [AW-1:0] wbuf_addr,
    input wire [OCP*ICP*8-1:0] wbuf_data,  // lane o, input i at bits (o*ICP+i)*8
    // per output lane: Bias (int32), M (int32), S (6 bits)
    input wire [OCP*32-1:0] bias,
    input wire [OCP*32-1:0] mult,
    input wire [OCP*6-1:0] shift,
    input wire signed [7:0] x_zp,
    input wire signed [7:0] y_zp,
    input wire signed [7:0] qmin,
    input wire signed [7:0] qmax,
    // control
    input wire start,
    input wire [AW:0] steps,               // 1 .. DEPTH
    input wire first,                      // start the accumulators at Bias
    input wire last,                       // requantize into the output buffer
    output reg done,
    // output buffer, one word per pixel: lane o at bits o*8
    input wire [7:0] obuf_addr,
    output wire [OCP*8-1:0] obuf_data
);
  localparam XW = PP * ICP * 8;
  localparam WW = OCP * ICP * 8;
  localparam integer LAST = PP - 1;
  localparam [7:0] LAST_PIXEL = LAST[7:0];

  // ---- tile buffers (block RAM: registered read) ----
  reg [XW-1:0] xmem[0:DEPTH-1];
  reg [WW-1:0] wmem[0:DEPTH-1];
  reg [XW-1:0] xq;
  reg [WW-1:0] wq;
  reg [AW-1:0] raddr;
  always @(posedge clk) begin
    if (xbuf_we) xmem[xbuf_addr] <= xbuf_data;
    if (wbuf_we) wmem[wbuf_addr] <= wbuf_data;
  end
  always @(posedge clk) begin
    xq <= xmem[raddr];
    wq <= wmem[raddr];
  end

  // ---- control ----
  reg issuing, v1, v2, v3, is_last, draining;
  reg [AW:0] left;        // steps still to issue
  reg [7:0] dpix;         // next pixel to requantize
  reg [2:0] rq_valid;     // requantization pipeline: select, multiply, shift (then clamp)
  reg [7:0] rq_pix[0:2];
  wire last_acc = v3 && !issuing && !v1 && !v2;  // the final step is accumulating
  always @(posedge clk) begin
    if (rst) begin
      issuing <= 1'b0;
      v1 <= 1'b0;
      v2 <= 1'b0;
      v3 <= 1'b0;
      draining <= 1'b0;
      done <= 1'b0;
      raddr <= {AW{1'b0}};
    end else begin
      done <= 1'b0;
      v1 <= issuing;
      v2 <= v1;
      v3 <= v2;
      if (start) begin
        issuing <= 1'b1;
        raddr <= {AW{1'b0}};
        left <= steps;
        is_last <= last;
      end else if (issuing) begin
        raddr <= raddr + 1'b1;
        left <= left - 1'b1;
        if (left == 1) issuing <= 1'b0;
      end
      if (last_acc) begin
        if (is_last) begin
          draining <= 1'b1;
          dpix <= 8'd0;
        end else begin
          done <= 1'b1;
        end
      end
      if (draining) begin
        dpix <= dpix + 1'b1;
        if (dpix == LAST_PIXEL) draining <= 1'b0;
      end
      if (rq_valid[2] && rq_pix[2] == LAST_PIXEL) done <= 1'b1;
    end
  end
  // The read address advances while issuing: edge s+1 registers step s,
  // the value raddr held during the cycle before it.

  // ---- multiplier array: two pixels per multiplier ----
  reg signed [15:0] prod[0:PP*OCP*ICP-1];  // [p][o][i]
  genvar gp, go, gi;
  generate
    for (gp = 0; gp < PP; gp = gp + 2) begin : g_pair
      for (go = 0; go < OCP; go = go + 1) begin : g_lane
        for (gi = 0; gi < ICP; gi = gi + 1) begin : g_in
          wire signed [8:0] a0 = $signed({xq[(gp*ICP+gi)*8+7], xq[(gp*ICP+gi)*8+:8]}) -
                                 $signed({x_zp[7], x_zp});
          wire signed [8:0] a1 = $signed({xq[((gp+1)*ICP+gi)*8+7], xq[((gp+1)*ICP+gi)*8+:8]}) -
                                 $signed({x_zp[7], x_zp});
          wire signed [24:0] pa = $signed({a1, 16'd0}) + $signed({{16{a0[8]}}, a0});
          wire signed [7:0] wv = wq[(go*ICP+gi)*8+:8];
          wire signed [31:0] pm = pa * wv;  // |a1 * 2^16 + a0| * 128 < 2^31
          always @(posedge clk) begin
            prod[(gp*OCP+go)*ICP+gi] <= pm[15:0];
            prod[((gp+1)*OCP+go)*ICP+gi] <= pm[31:16] + {15'd0, pm[15]};
          end
        end
      end
    end
  endgenerate

  // ---- adder trees: one ICP-term sum per pixel and lane ----
  reg signed [31:0] sum[0:PP*OCP-1];  // [p][o]
  generate
    for (gp = 0; gp < PP; gp = gp + 1) begin : g_pix
      for (go = 0; go < OCP; go = go + 1) begin : g_sum
        // A chain the synthesizer balances; to Verilator's scheduler one
        // signal that feeds itself.
        /* verilator lint_off UNOPTFLAT */
        wire signed [31:0] part[0:ICP];
        /* verilator lint_on UNOPTFLAT */
        assign part[0] = 32'sd0;
        for (gi = 0; gi < ICP; gi = gi + 1) begin : g_add
          assign part[gi+1] = part[gi] + {{16{prod[(gp*OCP+go)*ICP+gi][15]}},
                                          prod[(gp*OCP+go)*ICP+gi]};
        end
        always @(posedge clk) sum[gp*OCP+go] <= part[ICP];
      end
    end
  endgenerate

  // ---- accumulators ----
  integer p, o;
  reg [31:0] acc[0:PP*OCP-1];  // [p][o]
  always @(posedge clk) begin
    for (p = 0; p < PP; p = p + 1) begin
      for (o = 0; o < OCP; o = o + 1) begin
        if (start && first) acc[p*OCP+o] <= bias[o*32+:32];
        else if (v3) acc[p*OCP+o] <= acc[p*OCP+o] + sum[p*OCP+o];
      end
    end
  end

  // ---- requantization: select, multiply, round and shift, clamp ----
  reg [7:0] obuf[0:PP*OCP-1];  // [p][o]
  always @(posedge clk) begin
    if (rst) rq_valid <= 3'd0;
    else rq_valid <= {rq_valid[1:0], draining};
    rq_pix[0] <= dpix;
    rq_pix[1] <= rq_pix[0];
    rq_pix[2] <= rq_pix[1];
  end
  generate
    for (go = 0; go < OCP; go = go + 1) begin : g_rq
      reg signed [31:0] r_acc;
      reg signed [63:0] r_prod;
      reg signed [31:0] r_sat;
      wire [5:0] sh = shift[go*6+:6];
      // M < 2^31, so 32 x 32 signed bits hold it and the product fits 63.
      wire signed [31:0] m = mult[go*32+:32];
      wire signed [63:0] rounded = r_prod + ($signed(64'd1) <<< (sh - 6'd1));
      wire signed [63:0] shifted = rounded >>> sh;
      wire signed [32:0] biased = $signed({r_sat[31], r_sat}) + $signed({{25{y_zp[7]}}, y_zp});
      always @(posedge clk) begin
        r_acc <= acc[dpix*OCP+go];
        r_prod <= r_acc * m;
        if (shifted > 64'sh7fffffff) r_sat <= 32'sh7fffffff;
        else if (shifted < -64'sh80000000) r_sat <= 32'sh80000000;
        else r_sat <= shifted[31:0];
        if (rq_valid[2]) begin
          if (biased < $signed({{25{qmin[7]}}, qmin})) obuf[rq_pix[2]*OCP+go] <= qmin;
          else if (biased > $signed({{25{qmax[7]}}, qmax})) obuf[rq_pix[2]*OCP+go] <= qmax;
          else obuf[rq_pix[2]*OCP+go] <= biased[7:0];
        end
      end
      assign obuf_data[go*8+:8] = obuf[obuf_addr*OCP+go];
    end
  endgenerate
endmodule
